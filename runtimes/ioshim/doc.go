// Package ioshim runs an `io` transformer: a command that reads one object on
// stdin and writes its result to stdout. It runs inside transformer pods of
// `communication: io` Transforms (image mlkube/io-shim, cmd/io-shim), serves
// the transformer SDK (every mechanism of the agent ↔ transformer contract)
// and runs the command once per object.
//
// The controller injects the shim into the transformer pod; the contract,
// fixed on both sides, is in package api/wire:
//
//   - an init container, image wire.IOShimImage (or the manager's
//     --io-shim-image), command
//     wire.IOShimInstallCommand(): the shim copies its own executable to
//     wire.IOShimBinPath (static images have no shell or cp, hence the
//     subcommand);
//   - an emptyDir volume wire.IOShimVolume mounted at wire.IOShimMountPath in
//     both containers;
//   - the transformer container's command becomes wire.IOShimCommand(mode,
//     user command and args), with the SDK's port variable (wire.EnvPort) set
//     to 8000.
//
// Per object the command gets the object's bytes on stdin, streamed, and its
// stdout is streamed back as the result. The request's arguments are in the
// environment variable EnvArgs and the object's name in EnvObject. A non-zero
// exit fails the object with a message carrying the exit status and the last
// StderrTail bytes of stderr. When the object's context ends (client gone,
// per-object timeout) the command's whole process group is killed.
//
// With --persistent (Persistent) the command instead runs once per worker, up
// to the concurrency, and transforms object after object in the framing of
// package sdk/ioframe: the object's name and args in the request, not the
// environment. A command that dies, breaks the framing or runs past its
// object's end fails that object and is replaced.
package ioshim

import "github.com/mlkube/mlkube/api/wire"

// The shim's side of the contract in api/wire: its install subcommand and the environment it
// gives the user's command.
const (
	InstallSubcommand = wire.IOShimInstall
	EnvArgs           = wire.EnvIOArgs
	EnvObject         = wire.EnvIOObject

	// StderrTail is how much of the end of a failed command's stderr its
	// error message keeps.
	StderrTail = 4 << 10
)
