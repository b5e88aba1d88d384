// Package transformertest runs a transformer.Func in process, on loopback,
// and moves objects through it by every mechanism of the wire contract, the
// way the node data path agent does. Transformer authors test their Func with
// it; the SDK's own tests and benchmarks use it too.
package transformertest
