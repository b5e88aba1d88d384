package mxjob

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// waitStates are the states wait accepts in --for.
var waitStates = []string{
	string(v1beta1.StateSucceeded), string(v1beta1.StateFailed),
	string(v1beta1.StateRunning), string(v1beta1.StateSuspended),
}

type waitOptions struct {
	env   *cli.Env
	cmd   *cobra.Command
	name  string
	ns    string
	flags cli.WaitFlags
}

func newWaitCommand(env *cli.Env) *cobra.Command {
	o := &waitOptions{env: env, flags: cli.WaitFlags{Noun: "state", Allowed: waitStates}}
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
	o.flags.AddFlags(cmd, string(v1beta1.StateSucceeded), "", "")
	return cmd
}

func (o *waitOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.name = cmd, args[0]
	ns, _, err := o.env.Clients.Namespace()
	o.ns = ns
	return err
}

func (o *waitOptions) Validate() error { return o.flags.Validate(o.cmd) }

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
	w := &cli.Waiter[*v1beta1.MxJob]{
		Env: o.env, Resource: mxJobs, Kind: "mxjob", Timeout: o.flags.Timeout,
		Settle:  o.settle,
		Awaited: o.flags.Awaited(),
		Current: state,
	}
	_, err := w.Run(ctx, o.ns, o.name)
	return err
}

func (o *waitOptions) settle(job *v1beta1.MxJob) (bool, error) {
	done, err := waitVerdict(job, o.flags.For)
	if done && err == nil {
		fmt.Fprintf(o.env.Out, "mxjob.mxnet.mlkube.io/%s %s\n", job.Name, job.Status.State)
	}
	return done, err
}
