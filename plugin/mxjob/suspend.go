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
	cmd     *cobra.Command
	suspend bool
	all     bool
	names   []string
	ns      string
}

func newSuspendCommand(env *cli.Env, suspend bool) *cobra.Command {
	o := &suspendOptions{env: env, suspend: suspend}
	cmd := &cobra.Command{
		Use:   "suspend (NAME... | --all)",
		Short: "Suspend MxJobs: their running pods are deleted until they are resumed",
		Example: `  # Free a job's nodes for a while
  kubectl mxjob suspend mnist`,
		ValidArgsFunction: cli.CompleteNames(env, mxJobs.NewList),
		RunE:              cli.RunE(o),
	}
	if !suspend {
		cmd.Use = "resume (NAME... | --all)"
		cmd.Short = "Resume suspended MxJobs: their pods are created again"
		cmd.Example = `  # Carry on with a suspended job
  kubectl mxjob resume mnist`
	}
	if suspend {
		cli.MarkDestructive(cmd)
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "Act on every MxJob of the namespace.")
	return cmd
}

func (o *suspendOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.names = cmd, args
	ns, _, err := o.env.Clients.Namespace()
	o.ns = ns
	return err
}

func (o *suspendOptions) Validate() error {
	switch {
	case o.all && len(o.names) > 0:
		return cli.UsageError(o.cmd, "name jobs or pass --all, not both")
	case !o.all && len(o.names) == 0:
		return cli.UsageError(o.cmd, "NAME is required (or --all)")
	}
	return nil
}

func (o *suspendOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	verb := map[bool]string{true: "suspended", false: "resumed"}[o.suspend]
	names := o.names
	if o.all {
		var list v1beta1.MxJobList
		if err := c.List(ctx, &list, client.InNamespace(o.ns)); err != nil {
			return err
		}
		for _, j := range list.Items {
			names = append(names, j.Name)
		}
		if len(names) == 0 {
			fmt.Fprintf(o.env.ErrOut, "No mxjobs found in namespace %s.\n", o.ns)
		}
	}
	for _, name := range names {
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
