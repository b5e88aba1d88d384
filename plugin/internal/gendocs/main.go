// Command gendocs writes the command reference of kubectl-mxjob and kubectl-etl as Markdown,
// one page per command, from the plugins' own cobra trees, so the reference cannot drift from
// the code: `make docs` runs it into docs/commands and `make verify` fails when the pages
// checked in differ from what it writes.
//
// usage: go run ./plugin/internal/gendocs DIR
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mlkube/mlkube/plugin/etl"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/mxjob"
)

func main() {
	// The plugins' packages link controller-runtime, whose logger every command sets; gendocs
	// builds their command trees and never runs them, so it has nothing to log.
	ctrllog.SetLogger(logr.Discard())
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendocs DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	// kubectl's --cache-dir defaults to $KUBECACHEDIR or the home directory: the pages say
	// "$HOME/.kube/cache" whoever generates them.
	if err := os.Unsetenv("KUBECACHEDIR"); err != nil {
		return err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	roots := pluginRoots()
	for _, root := range roots {
		portableDefaults(root, home)
	}
	return writeReference(dir, roots)
}

// pluginRoots builds the plugins' root commands as their mains do; nothing here touches a cluster,
// since the plugins make their clients only when a command runs.
func pluginRoots() []*cobra.Command {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: io.Discard, ErrOut: io.Discard}
	mx := cli.NewEnv(streams, cli.NewConfigFlags(), mxjob.NewScheme())
	et := cli.NewEnv(streams, cli.NewConfigFlags(), etl.NewScheme())
	return []*cobra.Command{
		mxjob.NewRoot(mx),
		etl.NewRoot(et),
	}
}
