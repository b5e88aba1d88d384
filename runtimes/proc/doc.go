// Package proc holds what the transformer runtimes need around the child
// processes they run per object or per worker: the tail of a child's stderr
// for error messages, and killing a child together with everything it
// started.
package proc
