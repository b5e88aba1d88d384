package mxjob

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// suspendOptions set runPolicy.suspend: true deletes the job's running pods, false recreates them.
type suspendOptions struct {
	env     *cli.Env
	suspend bool
	names   []string
	ns      string
}

func newSuspendCommand(env *cli.Env, suspend bool) *cobra.Command {
	o := &suspendOptions{env: env, suspend: suspend}
	cmd := &cobra.Command{
		Use:   "suspend NAME...",
		Short: "Suspend MxJobs: their running pods are deleted until they are resumed",
		Example: `  # Free a job's nodes for a while
  kubectl mxjob suspend mnist`,
		ValidArgsFunction: cli.CompleteNames(env, mxJobs.NewList),
		RunE:              cli.RunE(o),
	}
	if !suspend {
		cmd.Use = "resume NAME..."
		cmd.Short = "Resume suspended MxJobs: their pods are created again"
		cmd.Example = `  # Carry on with a suspended job
  kubectl mxjob resume mnist`
	}
	cmd.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cli.UsageError(cmd, "NAME is required")
		}
		return nil
	}
	return cmd
}

func (o *suspendOptions) Complete(_ *cobra.Command, args []string) error {
	o.names = args
	ns, _, err := o.env.Clients.Namespace()
	o.ns = ns
	return err
}

func (o *suspendOptions) Validate() error { return nil }

func (o *suspendOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	verb := map[bool]string{true: "suspended", false: "resumed"}[o.suspend]
	for _, name := range o.names {
		var job v1beta1.MxJob
		if err := c.Get(ctx, client.ObjectKey{Namespace: o.ns, Name: name}, &job); err != nil {
			return err
		}
		if ptr.Deref(job.Spec.RunPolicy.Suspend, false) == o.suspend {
			fmt.Fprintf(o.env.Out, "mxjob.mxnet.mlkube.io/%s already %s\n", name, verb)
			continue
		}
		// A merge patch of the one field, so a concurrent change to the job is not overwritten.
		patch := client.MergeFrom(job.DeepCopy())
		job.Spec.RunPolicy.Suspend = ptr.To(o.suspend)
		if err := c.Patch(ctx, &job, patch); err != nil {
			return err
		}
		fmt.Fprintf(o.env.Out, "mxjob.mxnet.mlkube.io/%s %s\n", name, verb)
	}
	return nil
}
