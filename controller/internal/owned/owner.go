// Package owned is what the MxJob and Transform reconcilers do alike with the objects they own:
// finding them, creating and deleting them in slow-start batches with an event and a V(2) log line
// for each, keeping a single owned object as wanted (Ensure), recording the events a plan decided,
// and choosing when to reconcile again (requeue delays and the backoff before a failed pod is
// replaced).
package owned

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/controller/internal/slowstart"
)

// Owner is the object one reconcile works for (an MxJob or a Transform), with the client that
// makes its pods and Services and the recorder its events go to.
type Owner struct {
	Client   client.Client
	Recorder events.EventRecorder
	Object   client.Object
}

// Creation is an object to create and the messages of its events: Created, unless empty, when
// the create succeeds; Creating, followed by the error, when it fails.
type Creation struct {
	Object            client.Object
	Created, Creating string
}

// Deletion is an object to delete, with its options, and Deleting, unless empty, followed by the
// error: the message of the warning event when the delete fails.
type Deletion struct {
	Object   client.Object
	Options  []client.DeleteOption
	Deleting string
}

// Pods lists the pods in the owner's namespace that carry labels and that the owner controls.
func (o Owner) Pods(ctx context.Context, labels client.MatchingLabels) ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := o.Client.List(ctx, &list, client.InNamespace(o.Object.GetNamespace()), labels); err != nil {
		return nil, err
	}
	return controlledBy(o.Object, list.Items), nil
}

// Services lists the Services in the owner's namespace that carry labels and that the owner
// controls.
func (o Owner) Services(ctx context.Context, labels client.MatchingLabels) ([]corev1.Service, error) {
	var list corev1.ServiceList
	if err := o.Client.List(ctx, &list, client.InNamespace(o.Object.GetNamespace()), labels); err != nil {
		return nil, err
	}
	return controlledBy(o.Object, list.Items), nil
}

// controlledBy keeps the items whose controller is owner: labels alone also match an object
// someone else made with them, or one left by an earlier owner of the same name.
func controlledBy[T any, PT interface {
	*T
	metav1.Object
}](owner metav1.Object, items []T) []T {
	var out []T
	for i := range items {
		if ref := metav1.GetControllerOfNoCopy(PT(&items[i])); ref != nil && ref.UID == owner.GetUID() {
			out = append(out, items[i])
		}
	}
	return out
}

// Create makes the object of each item in slow-start batches. It records one SuccessfulCreate<Kind>
// event per batch, as Kubernetes' own controllers aggregate theirs: an event per object doubles
// the API server's writes for a large job, and the events library sends them at the manager's
// QPS long after the objects exist. A batch of one keeps its Creation's message. A failure is a
// FailedCreate<Kind> event of its own. Objects of items after a failing batch are not even built.
// Names are deterministic, so AlreadyExists means a create raced a stale cache, not a duplicate:
// it is no error.
func Create[T any](ctx context.Context, o Owner, items []T, creation func(T) Creation) error {
	var mu sync.Mutex
	var created []Creation // in the current batch, with a Created message
	_, err := slowstart.DoBatches(items, func(item T) error {
		c := creation(item)
		err := o.Client.Create(ctx, c.Object)
		switch {
		case err == nil:
			o.log(ctx, "created", c.Object)
			if c.Created != "" {
				mu.Lock()
				created = append(created, c)
				mu.Unlock()
			}
			return nil
		case k8serrors.IsAlreadyExists(err):
			return nil
		default:
			o.Event(true, "FailedCreate"+kind(c.Object), fmt.Sprintf("%s: %v", c.Creating, err))
			return err
		}
	}, func([]T, []error) {
		if len(created) > 0 {
			o.Event(false, "SuccessfulCreate"+kind(created[0].Object), createdMessage(created))
		}
		created = created[:0]
	})
	return err
}

// createdMessage is the event message of a batch's created objects: the Creation's own for one,
// else their count and names ("created 3 pods: a, b, c"), sorted, as many as fit in
// maxEventNamesBytes and then how many more.
func createdMessage(created []Creation) string {
	if len(created) == 1 {
		return created[0].Created
	}
	names := make([]string, len(created))
	for i, c := range created {
		names[i] = c.Object.GetName()
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "created %d %ss: ", len(names), strings.ToLower(kind(created[0].Object)))
	for i, name := range names {
		if i > 0 && b.Len()+len(", ")+len(name) > maxEventNamesBytes {
			fmt.Fprintf(&b, " and %d more", len(names)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
	}
	return b.String()
}

// maxEventNamesBytes bounds the names an aggregated event lists: an event's note is at most 1 KiB,
// and a name up to 253 bytes.
const maxEventNamesBytes = 512

// Delete removes the object of each item in slow-start batches, recording a FailedDelete<Kind>
// event on failure. NotFound means the object is already gone, and Conflict that a UID
// precondition found a newer object of the same name: neither is an error.
func Delete[T any](ctx context.Context, o Owner, items []T, deletion func(T) Deletion) error {
	_, err := slowstart.Do(items, func(item T) error {
		d := deletion(item)
		err := o.Client.Delete(ctx, d.Object, d.Options...)
		switch {
		case err == nil:
			o.log(ctx, "deleted", d.Object)
			return nil
		case k8serrors.IsNotFound(err) || k8serrors.IsConflict(err):
			return nil
		default:
			if d.Deleting != "" {
				o.Event(true, "FailedDelete"+kind(d.Object), fmt.Sprintf("%s: %v", d.Deleting, err))
			}
			return err
		}
	})
	return err
}

// log writes, at V(2), that obj was created or deleted for the owner:
// "created pod" pod="ns/j-worker-0" mxjob="ns/j".
func (o Owner) log(ctx context.Context, verb string, obj client.Object) {
	k := strings.ToLower(kind(obj))
	ctrl.LoggerFrom(ctx).V(2).Info(verb+" "+k, k, klog.KObj(obj), strings.ToLower(kind(o.Object)), klog.KObj(o.Object))
}

// kind is obj's Go type name, which for API types is its Kind ("Pod", "Service", "MxJob"): the
// objects built in code leave TypeMeta empty.
func kind(obj client.Object) string {
	return reflect.TypeOf(obj).Elem().Name()
}
