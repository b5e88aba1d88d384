package mxjob

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// waitStates are the states wait accepts in --for.
var waitStates = []string{
	string(v1beta1.StateSucceeded), string(v1beta1.StateFailed),
	string(v1beta1.StateRunning), string(v1beta1.StateSuspended),
}

type waitOptions struct {
	env     *cli.Env
	cmd     *cobra.Command
	name    string
	ns      string
	forList []string
	timeout time.Duration
}

func newWaitCommand(env *cli.Env) *cobra.Command {
	o := &waitOptions{env: env}
	cmd := &cobra.Command{
		Use:   "wait NAME --for=STATE[,STATE...]",
		Short: "Wait for an MxJob to reach a state: exit 0 when it does, 1 when it ends otherwise, 2 on timeout",
		Example: `  # Wait up to an hour for a job to succeed
  kubectl mxjob wait mnist --for=Succeeded --timeout=1h

  # Wait for the job to finish either way (exit 0 both times)
  kubectl mxjob wait mnist --for=Succeeded,Failed

  # Wait until its pods run
  kubectl mxjob wait mnist --for=Running`,
		Args:              cli.ExactArgs("NAME"),
		ValidArgsFunction: cli.CompleteNames(env, mxJobs.NewList),
		RunE:              cli.RunE(o),
	}
	cmd.Flags().StringSliceVar(&o.forList, "for", []string{string(v1beta1.StateSucceeded)}, "States to wait for: "+strings.Join(waitStates, ", ")+".")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 30*time.Minute, "Give up after this long (exit code 2); 0 waits forever.")
	_ = cmd.RegisterFlagCompletionFunc("for", cobra.FixedCompletions(waitStates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (o *waitOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.name = cmd, args[0]
	ns, _, err := o.env.Clients.Namespace()
	o.ns = ns
	return err
}

func (o *waitOptions) Validate() error {
	for _, s := range o.forList {
		if !slices.Contains(waitStates, s) {
			return cli.UsageError(o.cmd, "--for %q is not a state; use %s", s, strings.Join(waitStates, ", "))
		}
	}
	if o.timeout < 0 {
		return cli.UsageError(o.cmd, "--timeout must not be negative")
	}
	return nil
}

// waitVerdict says whether a job in state st settles the wait: done and nil when it reached a
// wanted state, done and an error when it ended otherwise.
func waitVerdict(job *v1beta1.MxJob, want []string) (bool, error) {
	st := string(job.Status.State)
	if slices.Contains(want, st) {
		return true, nil
	}
	if st == string(v1beta1.StateSucceeded) || st == string(v1beta1.StateFailed) {
		msg := fmt.Sprintf("mxjob/%s ended %s, not %s", job.Name, st, strings.Join(want, " or "))
		if job.Status.Reason != "" {
			msg += ": " + job.Status.Reason
		}
		return true, &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s; see 'kubectl mxjob describe %s'", msg, job.Name)}
	}
	return false, nil
}

func (o *waitOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	var timedOut <-chan time.Time
	if o.timeout > 0 {
		timedOut = o.env.Clock.After(o.timeout)
	}
	job := &v1beta1.MxJob{}
	for {
		// Get, then watch from what was read: the watch cannot miss a change after the get.
		if err := c.Get(ctx, client.ObjectKey{Namespace: o.ns, Name: o.name}, job); err != nil {
			return err
		}
		if done, err := o.settle(job); done {
			return err
		}
		w, err := c.Watch(ctx, &v1beta1.MxJobList{}, &client.ListOptions{
			Namespace:     o.ns,
			FieldSelector: fields.OneTermEqualSelector("metadata.name", o.name),
			Raw:           &metav1.ListOptions{ResourceVersion: job.ResourceVersion},
		})
		if err != nil {
			return err
		}
		done, err := o.follow(ctx, w, timedOut, job)
		w.Stop()
		if done {
			return err
		}
		// The watch ended (the API server closes them after a while): read the job again.
	}
}

// follow reads the watch until the wait is settled or the watch ends.
func (o *waitOptions) follow(ctx context.Context, w watch.Interface, timedOut <-chan time.Time, last *v1beta1.MxJob) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-timedOut:
			return true, &cli.ExitError{Code: cli.ExitTimeout, Err: fmt.Errorf("timed out after %s waiting for mxjob/%s to be %s (it is %s); wait longer with --timeout",
				o.timeout, o.name, strings.Join(o.forList, " or "), state(last))}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return false, nil
			}
			switch ev.Type {
			case watch.Deleted:
				return true, &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("mxjob/%s was deleted", o.name)}
			case watch.Added, watch.Modified:
				job, ok := ev.Object.(*v1beta1.MxJob)
				if !ok || job.Name != o.name {
					continue
				}
				*last = *job
				if done, err := o.settle(job); done {
					return true, err
				}
			}
		}
	}
}

func (o *waitOptions) settle(job *v1beta1.MxJob) (bool, error) {
	done, err := waitVerdict(job, o.forList)
	if done && err == nil {
		fmt.Fprintf(o.env.Out, "mxjob.mxnet.mlkube.io/%s %s\n", job.Name, job.Status.State)
	}
	return done, err
}
