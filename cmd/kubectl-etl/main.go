// Command kubectl-etl is the kubectl plugin for mlkube's Transforms; see plugin/etl. Linked as
// kubectl_complete-etl (kubectl etl completion install), it answers kubectl's shell completion.
package main

import (
	"os"

	"github.com/mlkube/mlkube/plugin/etl"
)

func main() { os.Exit(etl.Main()) }
