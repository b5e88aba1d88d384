package cli

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	// The kubeconfig auth providers kubectl has (oidc), for both plugins; exec credential
	// plugins are client-go's own.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Plugin describes a kubectl plugin: kubectl-<Name>, used as "kubectl <Name> …".
type Plugin struct {
	Name    string
	Short   string
	Long    string
	Example string
	// Groups are the API groups whose served versions `version` reports.
	Groups []string
}

// CompletionPrefix is how kubectl (≥ 1.26) names the executable it runs to complete a plugin's
// arguments: kubectl_complete-<plugin>.
const CompletionPrefix = "kubectl_complete-"

// Main runs a plugin as an executable and returns its exit code. Invoked under the name
// kubectl_complete-<Name>, it answers cobra's __complete protocol for kubectl.
func Main(p Plugin, scheme *runtime.Scheme, commands func(*Env) []*cobra.Command) int {
	// controller-runtime's clients log the API server's warnings; through klog, as client-go
	// and kubectl log theirs. Unset, they would be dropped and controller-runtime would print a
	// stack trace saying so.
	ctrllog.SetLogger(klog.NewKlogr())
	env := NewEnv(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, NewConfigFlags(), scheme)
	args := os.Args[1:]
	if filepath.Base(os.Args[0]) == CompletionPrefix+p.Name {
		args = append([]string{cobra.ShellCompRequestCmd}, args...)
	}
	return Execute(NewRoot(p, env, commands(env)...), args)
}

// NewRoot returns the plugin's root command holding cmds, `version` and `completion`, with
// kubectl's global flags.
func NewRoot(p Plugin, env *Env, cmds ...*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:     "kubectl-" + p.Name,
		Short:   p.Short,
		Long:    p.Long,
		Example: p.Example,
		Annotations: map[string]string{
			// Usage, help and errors say "kubectl mxjob", as the user types it.
			cobra.CommandDisplayNameAnnotation: "kubectl " + p.Name,
		},
		SilenceErrors: true, // Execute prints them, on one line
		SilenceUsage:  true, // a failed API call is not a usage mistake
		// Under kubectl, --help and completion must not touch the cluster; the clients are made
		// lazily, when a command runs.
		CompletionOptions: cobra.CompletionOptions{HiddenDefaultCmd: true},
	}
	root.SetIn(env.In)
	root.SetOut(env.Out)
	root.SetErr(env.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return UsageError(c, "%v", err)
	})
	env.Flags.AddFlags(root.PersistentFlags())
	registerNamespaceCompletion(root, env)
	root.AddCommand(cmds...)
	root.AddCommand(newVersionCommand(p, env), newCompletionCommand(p, env))
	return root
}

// Execute runs root with args, prints an error as one line and returns the exit code.
func Execute(root *cobra.Command, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	root.PrintErrln("error: " + oneLine(err.Error()))
	return exitCode(err)
}

// oneLine joins a multi-line message (an aggregate of API errors, say) into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", "; ")), " ")
}
