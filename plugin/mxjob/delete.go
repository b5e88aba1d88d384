package mxjob

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

type deleteOptions struct {
	env            *cli.Env
	cmd            *cobra.Command
	names          []string
	all            bool
	ignoreNotFound bool
	ns             string
}

func newDeleteCommand(env *cli.Env) *cobra.Command {
	o := &deleteOptions{env: env}
	cmd := cli.MarkDestructive(&cobra.Command{
		Use:   "delete (NAME... | --all)",
		Short: "Delete MxJobs and, through them, their pods and Services",
		Example: `  # Delete two jobs
  kubectl mxjob delete mnist cifar

  # Delete every job of the namespace
  kubectl mxjob delete --all -n team-vision`,
		ValidArgsFunction: cli.CompleteNames(env, mxJobs.NewList),
		RunE:              cli.RunE(o),
	})
	cmd.Flags().BoolVar(&o.all, "all", false, "Delete every MxJob of the namespace.")
	cmd.Flags().BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "Treat a job that does not exist as deleted.")
	return cmd
}

func (o *deleteOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.names = cmd, args
	ns, _, err := o.env.Clients.Namespace()
	o.ns = ns
	return err
}

func (o *deleteOptions) Validate() error {
	switch {
	case o.all && len(o.names) > 0:
		return cli.UsageError(o.cmd, "name jobs or pass --all, not both")
	case !o.all && len(o.names) == 0:
		return cli.UsageError(o.cmd, "NAME is required (or --all)")
	}
	return nil
}

func (o *deleteOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
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
	// The pods and Services go by garbage collection in the background, as with kubectl delete.
	policy := client.PropagationPolicy(metav1.DeletePropagationBackground)
	for _, name := range names {
		job := &v1beta1.MxJob{ObjectMeta: metav1.ObjectMeta{Namespace: o.ns, Name: name}}
		err := c.Delete(ctx, job, policy)
		if apierrors.IsNotFound(err) && o.ignoreNotFound {
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(o.env.Out, "mxjob.mxnet.mlkube.io %q deleted\n", name)
	}
	return nil
}
