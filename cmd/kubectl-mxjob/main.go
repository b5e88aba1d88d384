// Command kubectl-mxjob is the kubectl plugin for MxJobs; see plugin/mxjob.
package main

import (
	"os"

	"github.com/mlkube/mlkube/plugin/mxjob"
)

func main() { os.Exit(mxjob.Main()) }
