// Command torch-trainer is the entrypoint of mlkube/e2e-torch:dev, the e2e suite's PyTorch
// workload: `torch-trainer train` runs train.py, the training an MxJob's replicas run;
// `torch-trainer bench ...` runs bench.py, the in-pod speed of the datasets (make bench-cluster).
// Both are embedded, so the image needs no file but this binary on top of its Python layer
// (hack/build/python-runtime-image.sh torch), and run with Debian's python3, which finds PyTorch
// and the mlkube client in that layer.
package main

import (
	_ "embed"
	"fmt"
	"os"
	"syscall"
)

var (
	//go:embed train.py
	train string
	//go:embed bench.py
	bench string
)

var scripts = map[string]string{"train": train, "bench": bench}

const python = "/usr/bin/python3"

func main() {
	if len(os.Args) < 2 || scripts[os.Args[1]] == "" {
		fmt.Fprintln(os.Stderr, "usage: torch-trainer train | torch-trainer bench DATA_DIR NODE ROUNDS BARE_URL SIZE:COUNT...")
		os.Exit(2)
	}
	// -u: each line reaches the pod's log as it is printed, even when the process is killed.
	args := append([]string{python, "-u", "-c", scripts[os.Args[1]]}, os.Args[2:]...)
	err := syscall.Exec(python, args, os.Environ())
	fmt.Fprintf(os.Stderr, "torch-trainer: exec %s: %v\n", python, err)
	os.Exit(127)
}
