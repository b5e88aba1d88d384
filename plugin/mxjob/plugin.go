// Package mxjob is kubectl-mxjob: MxJobs (mxnet.mlkube.io/v1beta1) from the command line —
// create (also from Kubeflow MXJobs), submit, list, get, describe, logs, top, wait, suspend,
// resume and delete — built on the plugin frame of plugin/internal/cli.
package mxjob

import (
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// Plugin describes kubectl-mxjob.
var Plugin = cli.Plugin{
	Name:  "mxjob",
	Short: "Run and inspect distributed MXNet training jobs (MxJobs)",
	Long: `kubectl mxjob creates, submits and follows MxJobs (mxnet.mlkube.io/v1beta1): distributed MXNet
training with SCHEDULER, SERVER and WORKER replicas. It also takes Kubeflow MXJobs and converts them.`,
	Example: `  # Submit a distributed job with 2 workers and 1 server, then follow it
  kubectl mxjob submit mnist --image mxnet/python:1.9.1 --workers 2 --servers 1 -- python train.py
  kubectl mxjob logs mnist -f
  kubectl mxjob wait mnist --for=Succeeded --timeout=1h`,
	Groups: []string{v1beta1.GroupVersion.Group},
	CommandGroups: []cli.CommandGroup{
		{Title: "Create and run MxJobs", Commands: []string{"create", "submit"}},
		{Title: "Inspect MxJobs", Commands: []string{"list", "get", "describe", "logs", "top", "wait"}},
		{Title: "Manage MxJobs", Commands: []string{"suspend", "resume", "delete"}},
	},
}

// Main runs kubectl-mxjob and returns its exit code.
func Main() int { return cli.Main(Plugin, NewScheme(), Commands) }

// NewScheme knows MxJobs, the built-in kinds and pod metrics.
func NewScheme() *runtime.Scheme {
	s := scheme.New()
	utilruntime.Must(metricsv1beta1.AddToScheme(s))
	return s
}

// NewRoot is the root command over env, as Main builds it; tests run it with fake clients.
func NewRoot(env *cli.Env) *cobra.Command { return cli.NewRoot(Plugin, env, Commands(env)...) }

// Commands are kubectl-mxjob's own commands.
func Commands(env *cli.Env) []*cobra.Command {
	return []*cobra.Command{
		newCreateCommand(env),
		newSubmitCommand(env),
		newListCommand(env),
		newGetCommand(env),
		newDescribeCommand(env),
		newLogsCommand(env),
		newTopCommand(env),
		newWaitCommand(env),
		newSuspendCommand(env, true),
		newSuspendCommand(env, false),
		newDeleteCommand(env),
	}
}
