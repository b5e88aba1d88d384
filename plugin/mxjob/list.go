package mxjob

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// listOptions serve list (every job) and get (the jobs named).
type listOptions struct {
	env   *cli.Env
	flags *cli.ListFlags
	cmd   *cobra.Command
	names []string
}

func newListCommand(env *cli.Env) *cobra.Command {
	o := &listOptions{env: env, flags: cli.NewListFlags()}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List MxJobs",
		Example: `  # MxJobs of the current namespace
  kubectl mxjob list

  # Of every namespace, with servers, duration and reason (for a job Queued in Kueue, why it waits)
  kubectl mxjob list -A -o wide

  # Names only, of the jobs labelled team=vision
  kubectl mxjob list -l team=vision -o name

  # Watch them change
  kubectl mxjob list -w`,
		Args: cli.ExactArgs(),
		RunE: cli.RunE(o),
	}
	o.flags.AddFlags(cmd)
	return cmd
}

func newGetCommand(env *cli.Env) *cobra.Command {
	o := &listOptions{env: env, flags: cli.NewListFlags()}
	cmd := &cobra.Command{
		Use:   "get [NAME...]",
		Short: "Show MxJobs by name, or all of the namespace as list does",
		Example: `  # One job as a table
  kubectl mxjob get mnist

  # Its full YAML
  kubectl mxjob get mnist -o yaml

  # Its state alone
  kubectl mxjob get mnist -o jsonpath='{.status.state}'`,
		ValidArgsFunction: cli.CompleteNames(env, mxJobs.NewList),
		RunE:              cli.RunE(o),
	}
	o.flags.AddFlags(cmd)
	return cmd
}

func (o *listOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.names = cmd, args
	return nil
}

func (o *listOptions) Validate() error { return o.flags.ValidateNames(o.cmd, o.names) }

func (o *listOptions) Run(ctx context.Context) error {
	l := &cli.Lister[*v1beta1.MxJob]{Env: o.env, Flags: o.flags, Resource: mxJobs}
	return l.Run(ctx, o.names)
}
