// Command runtime-python is the entrypoint of the Python `code` runtime image
// (mlkube/runtime-python3.11:dev): it serves the function defined by
// $MLKUBE_CODE_SOURCE on $PORT (see package runtimes/python).
//
//	runtime-python [--workers N] [--python python3]
//	runtime-python --version
package main

import (
	"fmt"
	"os"

	"github.com/mlkube/mlkube/internal/version"
	"github.com/mlkube/mlkube/runtimes/python"
)

func main() {
	if version.Asked(os.Args[1:]) {
		fmt.Println(version.String("runtime-python"))
		return
	}
	os.Exit(python.Main(os.Args[1:], os.Stderr))
}
