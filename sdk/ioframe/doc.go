// Package ioframe is the framing of a persistent io transformer: a command that
// starts once and transforms object after object, read from its stdin and
// answered on its stdout, instead of one process per object. A Transform asks
// for it with `communication: io` and `ioMode: Persistent`; the io shim runs
// as many such commands as objects it transforms at once, each one object at
// a time.
//
// Every integer is 4 bytes, big-endian, unsigned. For each object the command
// reads a request:
//
//	u32 n, n bytes: the object's name (at most MaxField)
//	u32 n, n bytes: the request's arguments (at most MaxField)
//	chunks of the object: u32 n (1..MaxChunk), n bytes; then u32 0
//
// and writes a response:
//
//	chunks of the result: u32 n (1..MaxChunk), n bytes; then u32 0
//
// or, to fail the object (after any chunks) and keep serving:
//
//	u32 0xFFFFFFFF, u32 n, n bytes: the error's message (at most MaxField)
//
// The command must read the whole object, to its end chunk, before it writes
// the end of its response; it may stream its result while it reads, and must
// write nothing past it. A command that exits or breaks the framing fails its
// object with why and the end of its stderr; one still busy when the object's
// request ends (the client left, the agent's object timeout) is killed. Either
// way a new command replaces it at once, in the background. Serve implements
// the command's side for Go programs.
package ioframe

const (
	// MaxChunk bounds one chunk; writers here split larger writes.
	MaxChunk = 1 << 20
	// MaxField bounds a name, the arguments and an error's message.
	MaxField = 64 << 10
	// errorMark, in a chunk's length, starts an error.
	errorMark = 0xFFFFFFFF
)
