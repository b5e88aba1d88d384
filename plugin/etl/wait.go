package etl

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// ready is what wait --for accepts beyond the stages: Running with a ready transformer on every
// node, what `health` checks once.
const ready = "Ready"

// waitFor are the values of --for: the stages a Transform reaches, and Ready.
var waitFor = []string{ready, string(v1alpha1.StageRunning), string(v1alpha1.StageStopped), string(v1alpha1.StageAborted), string(v1alpha1.StageInitializing)}

type waitOptions struct {
	env   *cli.Env
	cmd   *cobra.Command
	name  string
	flags cli.WaitFlags
}

func newWaitCommand(env *cli.Env) *cobra.Command {
	o := &waitOptions{env: env, flags: cli.WaitFlags{Noun: "stage", Allowed: waitFor}}
	cmd := &cobra.Command{
		Use:   "wait NAME --for=STAGE[,STAGE...]",
		Short: "Wait for a Transform to reach a stage: exit 0 when it does, 1 when it is aborted or deleted, 2 on timeout, 3 when not found",
		Example: `  # Wait until md5 transforms on every node (what health checks once)
  kubectl etl wait md5 --for=Ready --timeout=5m

  # Wait until a suspended Transform's pods are gone
  kubectl etl wait md5 --for=Stopped`,
		Args:              cli.ExactArgs("NAME"),
		ValidArgsFunction: completeFirstTransform(env),
		RunE:              cli.RunE(o),
	}
	o.flags.AddFlags(cmd, ready, " (Ready: Running with a ready transformer on every node)", "")
	return cmd
}

func (o *waitOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.name = cmd, args[0]
	return nil
}

func (o *waitOptions) Validate() error { return o.flags.Validate(o.cmd) }

func (o *waitOptions) Run(ctx context.Context) error {
	ns, _, err := o.env.Clients.Namespace()
	if err != nil {
		return err
	}
	w := &cli.Waiter[*v1alpha1.Transform]{
		Env: o.env, Resource: transforms, Kind: "transform", Timeout: o.flags.Timeout,
		Settle: func(t *v1alpha1.Transform) (bool, error) {
			done, err := transformVerdict(t, o.flags.For)
			if done && err == nil {
				fmt.Fprintf(o.env.Out, "transform.etl.mlkube.io/%s %s\n", t.Name, waitState(t))
			}
			return done, err
		},
		Awaited: o.flags.Awaited(),
		Current: waitState,
	}
	_, err = w.Run(ctx, ns, o.name)
	return err
}

// waitState is a Transform's stage, or Ready when it is Running with every node healthy.
func waitState(t *v1alpha1.Transform) string {
	if _, unhealthy := HealthTable(t); t.Status.Stage == v1alpha1.StageRunning && len(t.Status.Nodes) > 0 && unhealthy == 0 {
		return ready
	}
	return stage(t)
}

// transformVerdict settles a wait: done when t is in a wanted state; done with ExitFailed when
// it is Aborted and that was not awaited, since an aborted Transform stays so until changed.
func transformVerdict(t *v1alpha1.Transform, want []string) (bool, error) {
	st := waitState(t)
	if slices.Contains(want, st) || (st == ready && slices.Contains(want, string(v1alpha1.StageRunning))) {
		return true, nil
	}
	if st == string(v1alpha1.StageAborted) {
		msg := fmt.Sprintf("transform/%s is Aborted, not %s", t.Name, strings.Join(want, " or "))
		if t.Status.Reason != "" {
			msg += ": " + t.Status.Reason
		}
		return true, &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("%s; see 'kubectl etl describe %s'", msg, t.Name)}
	}
	return false, nil
}
