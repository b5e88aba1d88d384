package mxjob

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

func newDeleteCommand(env *cli.Env) *cobra.Command {
	o := &cli.Named[*v1beta1.MxJob]{Env: env, Resource: mxJobs, Noun: "jobs", Act: deleteJob}
	cmd := o.Bind(cli.MarkDestructive(&cobra.Command{
		Use:   "delete (NAME... | --all)",
		Short: "Delete MxJobs and, through them, their pods and Services",
		Example: `  # Delete two jobs
  kubectl mxjob delete mnist cifar

  # Delete every job of the namespace
  kubectl mxjob delete --all -n team-vision`,
	}), "Delete every MxJob of the namespace.")
	cmd.Flags().BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Treat a job that does not exist as deleted.")
	return cmd
}

// deleteJob deletes job; its pods and Services go by garbage collection in the background, as
// with kubectl delete.
func deleteJob(ctx context.Context, c client.Client, job *v1beta1.MxJob) (string, error) {
	err := c.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))
	return fmt.Sprintf("mxjob.mxnet.mlkube.io %q deleted", job.Name), err
}
