package etl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

func newRunsFollowCommand(env *cli.Env) *cobra.Command {
	var timeout time.Duration
	cmd, o := newOneRunCommand(env, &cobra.Command{
		Use:   "follow NAME",
		Short: "Draw a TransformRun's progress until it ends: exit 0 when it succeeded, 1 when it failed",
		Long: `Draw a TransformRun's progress until it ends: on a terminal a bar for the run and one per node,
redrawn in place; otherwise a line per change. The exit code is 0 when the run succeeded, 1 when
it failed (its recent failures on stderr), 2 when --timeout passed first. Ctrl-C stops following,
not the run.`,
		Example: `  # Watch md5-x7k2p to its end
  kubectl etl runs follow md5-x7k2p`,
	}, func(ctx context.Context, o *oneRunOptions) error {
		return followRun(ctx, o.env, newRunWatch(o.env, o.c, o.ns, o.name, timeout, "finished"))
	})
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "Give up after this long (exit 2; the run goes on); 0 follows it to the end.")
	o.check = func(o *oneRunOptions) error { return cli.ValidateTimeout(o.cmd, timeout) }
	return cmd
}

// runWaitPhases are the phases runs wait accepts in --for.
var runWaitPhases = []string{
	string(v1alpha1.RunSucceeded), string(v1alpha1.RunFailed), string(v1alpha1.RunRunning), string(v1alpha1.RunSuspended),
}

func newRunsWaitCommand(env *cli.Env) *cobra.Command {
	flags := cli.WaitFlags{Noun: "phase", Allowed: runWaitPhases}
	cmd, o := newOneRunCommand(env, &cobra.Command{
		Use:   "wait NAME [--for=PHASE[,PHASE...]]",
		Short: "Wait for a TransformRun to reach a phase: exit 0 when it does, 1 when it ends otherwise, 2 on timeout",
		Example: `  # Wait up to an hour for md5-x7k2p to succeed
  kubectl etl runs wait md5-x7k2p --timeout 1h

  # Wait for it to end either way (exit 0 both times)
  kubectl etl runs wait md5-x7k2p --for=Succeeded,Failed`,
	}, func(ctx context.Context, o *oneRunOptions) error {
		w := newRunWatch(o.env, o.c, o.ns, o.name, flags.Timeout, flags.Awaited())
		return w.until(ctx, func(r *v1alpha1.TransformRun) (bool, error) {
			done, err := runWaitVerdict(r, flags.For)
			if done && err == nil {
				fmt.Fprintf(o.env.Out, "transformrun.etl.mlkube.io/%s %s\n", r.Name, phase(r.Status))
			}
			return done, err
		})
	})
	flags.AddFlags(cmd, string(v1alpha1.RunSucceeded), "", "Give up after this long (exit 2; the run goes on); 0 waits forever.")
	o.check = func(o *oneRunOptions) error { return flags.Validate(o.cmd) }
	return cmd
}

// runWaitVerdict says whether run settles the wait: done and nil when it reached a wanted phase,
// done and ExitFailed when it ended otherwise.
func runWaitVerdict(r *v1alpha1.TransformRun, want []string) (bool, error) {
	p := string(phase(r.Status))
	if slices.Contains(want, p) {
		return true, nil
	}
	if !finished(r.Status.Phase) {
		return false, nil
	}
	msg := fmt.Sprintf("TransformRun %s ended %s, not %s", r.Name, p, strings.Join(want, " or "))
	if r.Status.Phase == v1alpha1.RunFailed {
		msg += failure(r)
	}
	return true, &cli.ExitError{Code: cli.ExitFailed, Err: errors.New(msg)}
}

// newNamedRunsCommand makes cmd act on the runs named, or --all of the namespace, each with act,
// which returns the line to print.
func newNamedRunsCommand(env *cli.Env, cmd *cobra.Command, act func(context.Context, client.Client, *v1alpha1.TransformRun) (string, error)) (*cobra.Command, *cli.Named[*v1alpha1.TransformRun]) {
	o := &cli.Named[*v1alpha1.TransformRun]{Env: env, Resource: transformRuns, Noun: "runs", Act: act}
	return o.Bind(cmd, "Act on every TransformRun of the namespace."), o
}

// newRunsSuspendCommand is suspend (suspend true) or resume: both set spec.suspend, the one field
// of a started run that may change; the agents stop their workers after the current object, or
// go on where they stopped.
func newRunsSuspendCommand(env *cli.Env, suspend bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "suspend NAME...|--all",
		Short: "Suspend TransformRuns: every node stops after its current objects (spec.suspend=true)",
		Example: `  # Free the nodes for a while
  kubectl etl runs suspend md5-x7k2p`,
	}
	did := "suspended"
	if !suspend {
		cmd.Use, cmd.Short, did = "resume NAME...|--all", "Resume suspended TransformRuns where they stopped (spec.suspend=false)", "resumed"
		cmd.Example = `  # Carry on with md5-x7k2p
  kubectl etl runs resume md5-x7k2p`
	}
	cmd, _ = newNamedRunsCommand(env, cmd, func(ctx context.Context, c client.Client, r *v1alpha1.TransformRun) (string, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(r), r); err != nil {
			return "", err
		}
		switch {
		case finished(r.Status.Phase):
			return "", fmt.Errorf("TransformRun %s already %s; there is nothing to %s", r.Name, r.Status.Phase, strings.TrimSuffix(did, "d"))
		case r.Spec.Suspend == suspend:
			return "transformrun.etl.mlkube.io/" + r.Name + " already " + did, nil
		}
		// A merge patch of the one field, so a concurrent change to the run is not overwritten.
		patch := fmt.Appendf(nil, `{"spec":{"suspend":%t}}`, suspend)
		if err := c.Patch(ctx, r, client.RawPatch(client.Merge.Type(), patch)); err != nil {
			return "", err
		}
		return "transformrun.etl.mlkube.io/" + r.Name + " " + did, nil
	})
	return cmd
}

func newRunsDeleteCommand(env *cli.Env) *cobra.Command {
	cmd, o := newNamedRunsCommand(env, &cobra.Command{
		Use:     "delete NAME...|--all",
		Aliases: []string{"rm"},
		Short:   "Delete TransformRuns; a running one stops on every node, what it wrote stays",
		Example: `  # Delete one run, and every run of the namespace
  kubectl etl runs delete md5-x7k2p
  kubectl etl runs delete --all`,
	}, func(ctx context.Context, c client.Client, r *v1alpha1.TransformRun) (string, error) {
		return fmt.Sprintf("transformrun.etl.mlkube.io %q deleted", r.Name), c.Delete(ctx, r)
	})
	cmd.Flags().BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Treat a run that does not exist as deleted.")
	return cmd
}
