// Package repo locates the module's root and its git-ignored _output directory, where the e2e
// harness keeps images and cluster state so that separate commands (up, load-images, down) find
// each other's work.
package repo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Root is the nearest directory at or above the working directory that holds a go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// Output is <root>/_output/<sub>.
func Output(sub string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "_output", sub), nil
}

// Script runs a program of the repository (path relative to root) with args, and env added to the
// environment, its stderr passed through, and returns the last line it printed: how the hack/
// scripts that build and cache binaries report where they put them.
func Script(ctx context.Context, root, script string, args []string, env ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, script), args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return lines[len(lines)-1], nil
}

// ModuleDir is the directory of module path at the version the repository's go.mod requires,
// downloaded from the module proxy (checked against go.sum) when the cache lacks it: the files a
// dependency ships besides its Go code (Kueue's CRDs and manifests) are pinned like its code.
func ModuleDir(ctx context.Context, path string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", path)
	cmd.Dir = root
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if err == nil {
		err = json.Unmarshal(out, &mod)
	}
	if err == nil && mod.Dir == "" {
		err = fmt.Errorf("%s", mod.Error)
	}
	if err != nil {
		return "", fmt.Errorf("downloading module %s (go mod download %s): %w", path, path, err)
	}
	return mod.Dir, nil
}
