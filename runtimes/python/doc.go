// Package python is the runtime of the Transform `code` form for Python: a
// transformer (on the SDK, so every mechanism of the wire contract) that
// passes each object to the user's function transform(data: bytes) -> bytes
// (with the object's name and args when its signature asks),
// run by a small pool of long-running Python worker processes. It runs inside
// the transformer pods of `code` Transforms (image mlkube/runtime-python3.11,
// cmd/runtime-python).
//
// The controller renders the code form into a pod of the runtime's image
// (wire.PodImages.CodeRuntime; the manager's --code-runtime-image) and passes the code in the environment (EnvSource, EnvFunction,
// EnvDependencies, EnvChunkSize). At start the runtime installs the
// dependencies, if any, with pip into a private directory on the workers'
// sys.path, starts the workers and fails (non-zero exit, with a message
// naming the variable at fault) when the source does not compile, fails to
// load, or lacks the function.
//
// Semantics of one object:
//
//   - chunk size 0: the function is called once with the whole object (an
//     empty object too) and its return value is the result;
//   - chunk size n > 0: the object is cut into consecutive pieces of n bytes
//     (the last one shorter), the function is called on each in order, by the
//     same worker, and the results are concatenated; an empty object is one
//     call with b"". The result streams: a chunk's result is sent while the
//     next chunk is read, so memory stays near n per object; a failure in a
//     later chunk aborts the answer (the SDK never passes a truncated result
//     off as good).
//   - the function is called as its signature asks, as AIStore's
//     transform(data, path, etl_args) is: the bytes first, then the object's
//     name (path) and the request's args (etl_args, "" when none) when it has
//     parameters for them. Accepted: f(data), f(data, path),
//     f(data, path, etl_args) (any names; parameters with defaults count),
//     f(data, *rest) (rest gets path and etl_args), and keyword-only
//     parameters named path and etl_args; **kwargs gets nothing. Any other
//     required parameter fails the start (a *LoadError naming it). Each chunk's
//     call gets the same name and args. Package pysig reads the same answer
//     from the source, for clients that refuse args the function would drop.
//   - a Python exception fails that object only, with the exception's type,
//     message and the end of its traceback as the error (HTTP 500, ws error
//     message); the worker goes on. A worker that dies (a crash, os._exit) or
//     is killed (the object's context ended: client gone, object timeout —
//     the only way to stop a function that loops) is restarted for the next
//     object.
//
// print() in user code goes to the container log (stderr): stdout carries the
// workers' framing, which is a status byte, a 4-byte big-endian length and the
// bytes, both ways (worker.py). A frame holds at most 4 GiB - 1, so larger
// objects need a chunk size.
package python

import (
	_ "embed"

	"github.com/mlkube/mlkube/api/wire"
)

// workerScript is the worker's program, written to a temporary directory at
// start: the image has no other copy.
//
//go:embed worker.py
var workerScript []byte

// The runtime's side of the contract in api/wire: the environment the Transform controller sets.
const (
	EnvSource       = wire.EnvCodeSource
	EnvFunction     = wire.EnvCodeFunction
	EnvDependencies = wire.EnvCodeDependencies
	EnvChunkSize    = wire.EnvCodeChunkSize
	DefaultFunction = wire.DefaultCodeFunction
)
