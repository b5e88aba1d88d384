package wire

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// What the Transform controller puts into transformer pods and the programs in them read: the
// node's data root, the environment, the io shim's install and command line, and the images of the
// code runtimes. Both sides name these through this file, so they cannot drift apart.

// DataRoot holds each node's data root, DataRoot/<node>, on the host, and in it each namespace's
// data, DataRoot/<node>/<namespace>. The node agent mounts its node's directory at DataRoot; an fqn
// transformer mounts only its namespace's directory there, read-only, so the path the agent sends
// (DataRoot/<object>, the object named within the namespace) names the same file in both
// containers. One directory per node keeps nodes apart where they share storage.
const DataRoot = "/var/lib/mlkube/data"

// DataDriver is the CSI driver, served by each node's agent DaemonSet, that mounts an fqn
// transformer's namespace directory read-only into its pod: a csi volume keeps the transformer
// pod within the restricted Pod Security Standard, which forbids hostPath.
const DataDriver = "data.mlkube.io"

// The environment of transformer containers, besides EnvPort and EnvFQNRoot.
const (
	// EnvNode is the node the transformer pod is pinned to.
	EnvNode = "MLKUBE_NODE"

	// EnvCodeSource is the code form's Python source text defining the function.
	EnvCodeSource = "MLKUBE_CODE_SOURCE"
	// EnvCodeFunction is the name of the function; empty means DefaultCodeFunction.
	EnvCodeFunction = "MLKUBE_CODE_FUNCTION"
	// EnvCodeDependencies is a pip requirements text; empty means none.
	EnvCodeDependencies = "MLKUBE_CODE_DEPENDENCIES"
	// EnvCodeChunkSize is the chunk size in bytes; empty or 0 means whole objects.
	EnvCodeChunkSize = "MLKUBE_CODE_CHUNK_SIZE"
	// DefaultCodeFunction is the function called when EnvCodeFunction is empty.
	DefaultCodeFunction = "transform"

	// EnvIOArgs carries a request's arguments to an io transformer's command.
	EnvIOArgs = "MLKUBE_ARGS"
	// EnvIOObject carries the object's name to an io transformer's command.
	EnvIOObject = "MLKUBE_OBJECT"
)

// The io shim: an init container copies it into a shared volume, and the transformer container
// runs the user's command under it, once per object.
const (
	// IOShimImage is the shim's default image, run as the init container (PodImages.IOShim).
	IOShimImage = "mlkube/io-shim:dev"
	// IOShimVolume is the emptyDir volume that carries the shim into the transformer container.
	IOShimVolume = "mlkube-bin"
	// IOShimMountPath is where IOShimVolume is mounted in both containers.
	IOShimMountPath = "/mlkube/bin"
	// IOShimBinPath is where the init container installs the shim.
	IOShimBinPath = IOShimMountPath + "/io-shim"
	// IOShimInstall is the shim's subcommand that copies its executable to the path after it.
	IOShimInstall = "install"
	// IOShimPersistent is the shim's flag that runs the command once per worker, in the
	// framing of package sdk/ioframe, rather than once per object.
	IOShimPersistent = "--persistent"
)

// IOShimInstallCommand is the init container's command: the shim image's binary installs itself
// at IOShimBinPath.
func IOShimInstallCommand() []string {
	return []string{"/" + path.Base(IOShimBinPath), IOShimInstall, IOShimBinPath}
}

// IOShimCommand is the transformer container's command: the installed shim, IOShimPersistent if
// persistent, then "--" and the user's command and arguments.
func IOShimCommand(persistent bool, user ...string) []string {
	c := []string{IOShimBinPath}
	if persistent {
		c = append(c, IOShimPersistent)
	}
	return append(append(c, "--"), user...)
}

// codeRuntimeImages maps the code form's runtime names (v1alpha1.CodeRuntimes, which the webhook
// admits) to the images that run them by default: runtimes/python on Debian's interpreter of that
// version (hack/build/python-runtime-image.sh); bookworm has python3.11 only.
var codeRuntimeImages = map[string]string{
	"python3.11": "mlkube/runtime-python3.11:dev",
}

// PodImages are the images the Transform controller puts into transformer pods: the io shim's and
// each code runtime's. The defaults are the development images `make images` builds; a release
// passes its own (the manager's --io-shim-image and --code-runtime-image), pinned by digest.
type PodImages struct {
	// IOShim is the io shim's image, run as the init container of io transformers.
	IOShim string
	// CodeRuntimes maps each code runtime's name to its image.
	CodeRuntimes map[string]string
}

// DefaultPodImages returns the development images: IOShimImage and the runtimes' :dev images.
func DefaultPodImages() PodImages {
	return PodImages{IOShim: IOShimImage, CodeRuntimes: maps.Clone(codeRuntimeImages)}
}

// CodeRuntime returns the image of the code runtime named runtime (spec.code.runtime, e.g.
// "python3.11"), or an error listing the supported runtimes.
func (p PodImages) CodeRuntime(runtime string) (string, error) {
	if img, ok := p.CodeRuntimes[runtime]; ok {
		return img, nil
	}
	return "", fmt.Errorf("code runtime %q is not supported (supported: %s)",
		runtime, strings.Join(CodeRuntimeNames(), ", "))
}

// SetCodeRuntime replaces one runtime's image from "RUNTIME=IMAGE" (the manager's
// --code-runtime-image). Only a runtime the webhook admits may be named: the set of runtimes is
// fixed by the API, only their images change.
func (p *PodImages) SetCodeRuntime(spec string) error {
	runtime, img, ok := strings.Cut(spec, "=")
	if !ok || img == "" || strings.ContainsAny(img, " \t\n") {
		return fmt.Errorf("%q is not RUNTIME=IMAGE (e.g. python3.11=registry.example/mlkube/runtime-python3.11:v0.2.0)", spec)
	}
	if _, known := codeRuntimeImages[runtime]; !known {
		return fmt.Errorf("code runtime %q does not exist (runtimes: %s)", runtime, strings.Join(CodeRuntimeNames(), ", "))
	}
	if p.CodeRuntimes == nil {
		p.CodeRuntimes = map[string]string{}
	}
	p.CodeRuntimes[runtime] = img
	return nil
}

// SetIOShim replaces the io shim's image (the manager's --io-shim-image); it may not be empty.
func (p *PodImages) SetIOShim(img string) error {
	if img == "" || strings.ContainsAny(img, " \t\n") {
		return fmt.Errorf("io shim image %q: want an image reference", img)
	}
	p.IOShim = img
	return nil
}

// CodeRuntimeImage returns the default image of the code runtime named runtime, or an error
// listing the supported runtimes.
func CodeRuntimeImage(runtime string) (string, error) {
	return DefaultPodImages().CodeRuntime(runtime)
}

// CodeRuntimeNames lists the code runtimes an image exists for, sorted.
func CodeRuntimeNames() []string {
	return slices.Sorted(maps.Keys(codeRuntimeImages))
}
