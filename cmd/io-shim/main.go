// Command io-shim serves an `io` transformer: a command that reads one object
// on stdin and writes the result to stdout (see package runtimes/ioshim).
//
//	io-shim install /mlkube/bin/io-shim       # init container: copy itself
//	io-shim [--concurrency N] -- cmd args...  # serve cmd on $PORT (8000)
//	io-shim --version
package main

import (
	"fmt"
	"os"

	"github.com/mlkube/mlkube/internal/version"
	"github.com/mlkube/mlkube/runtimes/ioshim"
)

func main() {
	if version.Asked(os.Args[1:]) {
		fmt.Println(version.String("io-shim"))
		return
	}
	os.Exit(ioshim.Main(os.Args[1:], os.Stderr))
}
