package etl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// runWatch follows one TransformRun: a get, then a watch from what was read, so no change after
// the get is missed; when the API server closes the watch (it does every few minutes) it reads
// the run again and goes on.
type runWatch struct {
	c         client.WithWatch
	ns, name  string
	timeout   time.Duration
	timedOut  <-chan time.Time
	waitingOn string
}

// until calls seen with the run as it is now and after every change, until seen says the wait
// is over. It returns seen's error; ExitTimeout once the timeout passes (0: none); and when the
// user interrupts (Ctrl-C), an error saying the run goes on and how to follow it.
func (w *runWatch) until(ctx context.Context, seen func(*v1alpha1.TransformRun) (bool, error)) error {
	run := &v1alpha1.TransformRun{}
	for {
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: w.name}, run); err != nil {
			return w.interrupted(ctx, err)
		}
		if done, err := seen(run); done {
			return err
		}
		wi, err := w.c.Watch(ctx, &v1alpha1.TransformRunList{}, &client.ListOptions{
			Namespace:     w.ns,
			FieldSelector: fields.OneTermEqualSelector("metadata.name", w.name),
			Raw:           &metav1.ListOptions{ResourceVersion: run.ResourceVersion},
		})
		if err != nil {
			return w.interrupted(ctx, fmt.Errorf("watching TransformRun %s: %w", w.name, err))
		}
		done, err := w.follow(ctx, wi, run, seen)
		wi.Stop()
		if done {
			return err
		}
	}
}

// follow reads one watch until the wait is over or the watch ends; run is updated to the last
// version seen.
func (w *runWatch) follow(ctx context.Context, wi watch.Interface, run *v1alpha1.TransformRun, seen func(*v1alpha1.TransformRun) (bool, error)) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return true, w.interrupted(ctx, ctx.Err())
		case <-w.timedOut:
			return true, &cli.ExitError{Code: cli.ExitTimeout, Err: fmt.Errorf("timed out after %s waiting for transformrun/%s to be %s (it is %s); wait longer with --timeout, or follow it: kubectl etl runs follow %s",
				w.timeout, w.name, w.waitingOn, phase(run.Status), w.name)}
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return false, nil
			}
			switch ev.Type {
			case watch.Error:
				return true, fmt.Errorf("watching TransformRun %s: %v", w.name, ev.Object)
			case watch.Deleted:
				return true, &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("TransformRun %s was deleted before it finished", w.name)}
			case watch.Added, watch.Modified:
				r, ok := ev.Object.(*v1alpha1.TransformRun)
				if !ok || r.Name != w.name {
					continue
				}
				*run = *r
				if done, err := seen(run); done {
					return true, err
				}
			}
		}
	}
}

// interrupted turns the end of the command's context (Ctrl-C, SIGTERM) into what the user needs
// to know: only the plugin stopped watching, the run goes on. Other errors pass unchanged.
func (w *runWatch) interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return detached(w.name)
	}
	return err
}

// detached says the plugin stopped following run, which goes on; the exit code is "could not
// tell", since nobody knows yet how the run ends.
func detached(run string) error {
	return &cli.ExitError{Code: cli.ExitUnknown, Err: fmt.Errorf("detached; the run goes on: kubectl etl runs follow %s", run)}
}

// newRunWatch is a watch of run name of namespace ns that gives up after timeout (0: never),
// read on env's clock, waiting for what waitingOn says (named in the timeout's message).
func newRunWatch(env *cli.Env, c client.WithWatch, ns, name string, timeout time.Duration, waitingOn string) *runWatch {
	w := &runWatch{c: c, ns: ns, name: name, timeout: timeout, waitingOn: waitingOn}
	if timeout > 0 {
		w.timedOut = env.Clock.After(timeout)
	}
	return w
}

// runFinished is the exit of a run that ended: nil when it succeeded, ExitFailed with the
// Failed condition's message otherwise.
func runFinished(run *v1alpha1.TransformRun) error {
	if run.Status.Phase == v1alpha1.RunSucceeded {
		return nil
	}
	return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("TransformRun %s failed%s", run.Name, failure(run))}
}

// failure says why a failed run failed, per its Failed condition, and where its failed objects
// are listed.
func failure(run *v1alpha1.TransformRun) string {
	msg := ""
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.RunConditionFailed); c != nil && c.Message != "" {
		msg = ": " + c.Message
	}
	if run.Status.Totals.FailedObjects > 0 {
		msg += "; every failed object: kubectl etl runs errors " + run.Name
	}
	return msg
}
