package images

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"

	"github.com/mlkube/mlkube/e2e/internal/repo"
)

// Spec says how to make one image: a static binary, from exactly one of Package, Binary and
// Script, becomes the image's only file and its entrypoint.
type Spec struct {
	// Ref is the image reference pods use, e.g. "mlkube/manager:dev".
	Ref string
	// Package is a Go main package, built static (CGO_ENABLED=0) from the module root.
	Package string
	// Binary is the path of a prebuilt static binary.
	Binary string
	// Script is a program, relative to the module root, that prints the path of a prebuilt static
	// binary on its last line of output (hack/coredns.sh builds and caches CoreDNS this way).
	Script string
	// Env is added to the Script's environment (e.g. the version to build).
	Env []string
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

// binary returns the path of s's static binary, building it under tmp when s is a Go package.
func (s Spec) binary(ctx context.Context, root, tmp string) (string, error) {
	if s.sources() != 1 {
		return "", errors.New("set exactly one of Package, Binary and Script")
	}
	switch {
	case s.Package != "":
		out := filepath.Join(tmp, path.Base(s.Package))
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, s.Package)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %w\n%s", s.Package, err, b)
		}
		return out, nil
	case s.Binary != "":
		return s.Binary, nil
	default:
		return repo.Script(ctx, root, s.Script, s.Env...)
	}
}
