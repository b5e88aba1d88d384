// Package proc holds what the transformer runtimes need around the child
// processes they run per object or per worker: the tail of a child's stderr
// for error messages, killing a child together with everything it started,
// and long-lived workers (one object at a time over stdin and stdout) kept in
// a pool of fixed size that replaces the ones that die.
package proc
