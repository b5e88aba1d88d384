// Command torch-trainer is the entrypoint of mlkube/e2e-torch:dev, the e2e suite's PyTorch
// training workload: it runs train.py (embedded, so the image needs no file but this binary on top
// of its Python layer) with Debian's python3, which finds PyTorch and the mlkube client in the
// image's base layer (hack/build/python-runtime-image.sh torch).
package main

import (
	_ "embed"
	"fmt"
	"os"
	"syscall"
)

//go:embed train.py
var script string

const python = "/usr/bin/python3"

func main() {
	// -u: each line reaches the pod's log as it is printed, even when the process is killed.
	args := append([]string{python, "-u", "-c", script}, os.Args[1:]...)
	err := syscall.Exec(python, args, os.Environ())
	fmt.Fprintf(os.Stderr, "torch-trainer: exec %s: %v\n", python, err)
	os.Exit(127)
}
