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

// newSuspendCommand is suspend (true) or resume: both set runPolicy.suspend, true deletes the
// job's running pods, false recreates them.
func newSuspendCommand(env *cli.Env, suspend bool) *cobra.Command {
	o := &cli.Named[*v1beta1.MxJob]{Env: env, Resource: mxJobs, Noun: "jobs", Act: func(ctx context.Context, c client.Client, job *v1beta1.MxJob) (string, error) {
		return setSuspend(ctx, c, job, suspend)
	}}
	cmd := &cobra.Command{
		Use:   "suspend (NAME... | --all)",
		Short: "Suspend MxJobs: their running pods are deleted until they are resumed",
		Example: `  # Free a job's nodes for a while
  kubectl mxjob suspend mnist`,
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
	return o.Bind(cmd, "Act on every MxJob of the namespace.")
}

// setSuspend sets job's runPolicy.suspend, unless it is set so already.
func setSuspend(ctx context.Context, c client.Client, job *v1beta1.MxJob, suspend bool) (string, error) {
	verb := map[bool]string{true: "suspended", false: "resumed"}[suspend]
	if err := c.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
		return "", err
	}
	if ptr.Deref(job.Spec.RunPolicy.Suspend, false) == suspend {
		return fmt.Sprintf("mxjob.mxnet.mlkube.io/%s already %s", job.Name, verb), nil
	}
	// A merge patch of the one field, so a concurrent change to the job is not overwritten.
	patch := client.MergeFrom(job.DeepCopy())
	job.Spec.RunPolicy.Suspend = ptr.To(suspend)
	if err := c.Patch(ctx, job, patch); err != nil {
		return "", err
	}
	return fmt.Sprintf("mxjob.mxnet.mlkube.io/%s %s", job.Name, verb), nil
}
