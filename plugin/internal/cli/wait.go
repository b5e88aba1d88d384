package cli

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Waiter waits for one object to settle, as `wait` does in both plugins: exit 0 when it reaches
// what was awaited, 1 (ExitFailed) when it ends otherwise or is deleted, 2 (ExitTimeout) when
// Timeout runs out; not found and the like are 3, through the frame.
type Waiter[T client.Object] struct {
	Env      *Env
	Resource Resource[T]
	// Kind names the object in messages: mxjob, transform.
	Kind string
	// Timeout is how long to wait; 0 waits forever.
	Timeout time.Duration
	// Settle says whether obj settles the wait: done and nil when it reached what was awaited,
	// done and an error (an ExitError) when it never will.
	Settle func(obj T) (bool, error)
	// Awaited and Current say what was waited for and what the object is, for the timeout's
	// message.
	Awaited string
	Current func(obj T) string
}

// Run waits for the object ns/name.
func (w *Waiter[T]) Run(ctx context.Context, ns, name string) (T, error) {
	obj := w.Resource.New()
	c, err := w.Env.Clients.Client()
	if err != nil {
		return obj, err
	}
	var timedOut <-chan time.Time
	if w.Timeout > 0 {
		timedOut = w.Env.Clock.After(w.Timeout)
	}
	for {
		// Get, then watch from what was read: the watch cannot miss a change after the get.
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
			return obj, err
		}
		if done, err := w.Settle(obj); done {
			return obj, err
		}
		wi, err := c.Watch(ctx, w.Resource.NewList(), &client.ListOptions{
			Namespace:     ns,
			FieldSelector: fields.OneTermEqualSelector("metadata.name", name),
			Raw:           &metav1.ListOptions{ResourceVersion: obj.GetResourceVersion()},
		})
		if err != nil {
			return obj, err
		}
		done, err := w.follow(ctx, wi, timedOut, name, &obj)
		wi.Stop()
		if done {
			return obj, err
		}
		// The watch ended (the API server closes them after a while): read the object again.
	}
}

// follow reads the watch until the wait is settled or the watch ends.
func (w *Waiter[T]) follow(ctx context.Context, wi watch.Interface, timedOut <-chan time.Time, name string, last *T) (bool, error) {
	for {
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case <-timedOut:
			return true, &ExitError{Code: ExitTimeout, Err: fmt.Errorf("timed out after %s waiting for %s/%s to be %s (it is %s); wait longer with --timeout",
				w.Timeout, w.Kind, name, w.Awaited, w.Current(*last))}
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return false, nil
			}
			switch ev.Type {
			case watch.Deleted:
				return true, &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s/%s was deleted", w.Kind, name)}
			case watch.Added, watch.Modified:
				obj, ok := ev.Object.(T)
				if !ok || obj.GetName() != name {
					continue
				}
				*last = obj
				if done, err := w.Settle(obj); done {
					return true, err
				}
			}
		}
	}
}
