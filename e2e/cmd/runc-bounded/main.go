// Command runc-bounded is runc for sandboxes whose root lacks capabilities in its bounding set.
// There runc fails every container that asks for such a capability ("unable to apply caps:
// operation not permitted"), and docker's --privileged asks for all of them, ignoring --cap-drop:
// kind's node containers cannot start. hack/cluster/engine.sh makes this dockerd's default runtime only
// where that is so. It removes, from the spec runc is about to read (the bundle's config.json for
// create and run, the --process file for exec), every capability outside this process's bounding
// set, then becomes runc with the same arguments.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "runc-bounded:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	bounding, err := readBounding("/proc/self/status")
	if err != nil {
		return err
	}
	if spec, ok := specFile(args); ok {
		if err := boundFile(spec, bounding); err != nil {
			return fmt.Errorf("%s: %w", spec, err)
		}
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		return err
	}
	return syscall.Exec(runc, append([]string{"runc"}, args...), os.Environ())
}

// boundFile rewrites the spec at path, through a temporary file and a rename, when it names a
// capability outside bounding.
func boundFile(path string, bounding uint64) error {
	in, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, changed, err := boundSpec(in, bounding)
	if err != nil || !changed {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".runc-bounded-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
