package images

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/mlkube/mlkube/internal/repo"
)

// Spec says how to make one image: a static binary, from exactly one of Package, Binary and
// Script, becomes the image's entrypoint and, without a BaseLayerScript, its only file.
type Spec struct {
	// Ref is the image reference pods use, e.g. "mlkube/manager:dev".
	Ref string
	// Package is a Go main package, built static (CGO_ENABLED=0) from the module root.
	Package string
	// Binary is the path of a prebuilt static binary.
	Binary string
	// Script is a program, relative to the module root, that prints the path of a prebuilt static
	// binary on its last line of output (hack/build/pinned.sh builds and caches CoreDNS this way).
	Script string
	// Args are the Script's arguments (hack/build/pinned.sh's is the tool to build).
	Args []string
	// Env is added to the Script's environment (e.g. the version to build).
	Env []string
	// BaseLayerScript, if set, is a program, relative to the module root, that prints the path of
	// an uncompressed layer tarball on its last line of output; the layer goes below the binary's
	// (hack/build/python-runtime-image.sh collects Debian's python3.11 this way), and PATH then also
	// holds the usual bin and sbin directories.
	BaseLayerScript string
	// BaseLayerArgs are the BaseLayerScript's arguments (hack/build/python-runtime-image.sh's is
	// which layer: the runtime's, or the e2e training image's with PyTorch).
	BaseLayerArgs []string
	// Dir is the directory the binary goes in, "/" when empty (then also the image's PATH); an
	// image whose users run a fixed path (kubeadm's kube-proxy runs /usr/local/bin/kube-proxy)
	// names it here.
	Dir string
	// Links are further names of the binary in Dir, as symlinks: a program that a caller runs
	// by a well-known name (kubectl cp runs tar in the container) dispatches on the name.
	Links []string
}

// dir is where s's binary goes in the image, as a tar path without a leading slash ("" for /).
func (s Spec) dir() string {
	return strings.Trim(path.Clean("/"+s.Dir), "/")
}

// ArchEnv tells a BaseLayerScript the architecture (a GOARCH, which for amd64 and arm64 is also
// Debian's name) to make the layer for.
const ArchEnv = "MLKUBE_IMAGE_ARCH"

// baseLayers returns s's base layers for arch: none, or the one BaseLayerScript makes.
func (s Spec) baseLayers(ctx context.Context, root, arch string) ([]v1.Layer, error) {
	if s.BaseLayerScript == "" {
		return nil, nil
	}
	path, err := repo.Script(ctx, root, s.BaseLayerScript, s.BaseLayerArgs, ArchEnv+"="+arch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("base layer %s: %w", path, err)
	}
	return []v1.Layer{layer}, nil
}

// sources counts the sources s names; a buildable spec names one.
func (s Spec) sources() int {
	n := 0
	for _, src := range []string{s.Package, s.Binary, s.Script} {
		if src != "" {
			n++
		}
	}
	return n
}

// binary returns the path of s's static binary for arch, building it under tmp when s is a Go
// package, stamped with version when one is given (internal/version). Only a Go package builds
// for another architecture than the machine's.
func (s Spec) binary(ctx context.Context, root, tmp, version, arch string) (string, error) {
	if s.sources() != 1 {
		return "", errors.New("set exactly one of Package, Binary and Script")
	}
	if s.Package == "" && arch != runtime.GOARCH {
		return "", fmt.Errorf("only a Go package builds for %s; a prebuilt binary is this machine's (%s)", arch, runtime.GOARCH)
	}
	switch {
	case s.Package != "":
		out := filepath.Join(tmp, path.Base(s.Package))
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", goLDFlags(version), "-o", out, s.Package)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %w\n%s", s.Package, err, b)
		}
		return out, nil
	case s.Binary != "":
		return s.Binary, nil
	default:
		return repo.Script(ctx, root, s.Script, s.Args, s.Env...)
	}
}

// VersionVar is the variable a build stamps the release into, as the Makefile's build does.
const VersionVar = "github.com/mlkube/mlkube/internal/version.Version"

// goLDFlags are the linker flags of an image's Go binary: stripped, and stamped with version when
// one is given (an unstamped binary reports "dev").
func goLDFlags(version string) string {
	if version == "" {
		return "-s -w"
	}
	return "-s -w -X " + VersionVar + "=" + version
}
