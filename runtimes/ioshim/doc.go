// Package ioshim runs an `io` transformer: a command that reads one object on
// stdin and writes its result to stdout. The shim serves the transformer SDK
// (every mechanism of the wire contract) and runs the command once per object.
//
// The controller injects the shim into the transformer pod; the contract,
// fixed on both sides, is in the constants below:
//
//   - an init container, image Image, command InstallCommand(): the shim
//     copies its own executable to BinPath (static images have no shell or
//     cp, hence the subcommand);
//   - an emptyDir volume VolumeName mounted at MountPath in both containers;
//   - the transformer container's command becomes Command(user command and
//     args), with the SDK's port variable (wire.EnvPort) set to 8000.
//
// Per object the command gets the object's bytes on stdin, streamed, and its
// stdout is streamed back as the result. The request's arguments are in the
// environment variable EnvArgs and the object's name in EnvObject. A non-zero
// exit fails the object with a message carrying the exit status and the last
// StderrTail bytes of stderr. When the object's context ends (client gone,
// per-object timeout) the command's whole process group is killed.
package ioshim

import "path"

const (
	// Image is the shim's image, run as the init container.
	Image = "mlkube/io-shim:dev"
	// VolumeName is the emptyDir volume that carries the shim into the
	// transformer container.
	VolumeName = "mlkube-bin"
	// MountPath is where VolumeName is mounted in both containers.
	MountPath = "/mlkube/bin"
	// BinPath is where the init container installs the shim.
	BinPath = MountPath + "/io-shim"
	// InstallSubcommand copies the shim's executable to the path after it.
	InstallSubcommand = "install"

	// EnvArgs carries the request's arguments to the command.
	EnvArgs = "MLKUBE_ARGS"
	// EnvObject carries the object's name to the command.
	EnvObject = "MLKUBE_OBJECT"

	// StderrTail is how much of the end of a failed command's stderr its
	// error message keeps.
	StderrTail = 4 << 10
)

// InstallCommand is the init container's command: the shim image's binary
// installs itself at BinPath.
func InstallCommand() []string {
	return []string{"/" + path.Base(BinPath), InstallSubcommand, BinPath}
}

// Command is the transformer container's command: the installed shim, then
// "--" and the user's command and arguments.
func Command(user ...string) []string {
	return append([]string{BinPath, "--"}, user...)
}
