package owned

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mlkube/mlkube/api/scheme"
)

// owner is a ConfigMap standing in for an MxJob or a Transform: any object can own.
func owner() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "owner-uid"}}
}

func pod(name string, controller types.UID) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"job": "j"}}}
	if controller != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "j", UID: controller, Controller: new(true)}}
	}
	return p
}

// recorded closes rec, once every call that records is done, and returns what it recorded.
func recorded(rec *events.FakeRecorder) []string {
	close(rec.Events)
	var out []string
	for e := range rec.Events {
		out = append(out, e)
	}
	return out
}

func same[T any](v T) T { return v }

func TestPodsKeepsOnlyThoseTheOwnerControls(t *testing.T) {
	cl := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(pod("mine", "owner-uid"), pod("earlier-owner", "other-uid"), pod("orphan", "")).Build()
	pods, err := Owner{Client: cl, Object: owner()}.Pods(context.Background(), client.MatchingLabels{"job": "j"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"mine"}, names); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
}

func TestCreateRecordsEventsAndLogs(t *testing.T) {
	quota := errors.New("quota exceeded")
	cl := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(pod("exists", "owner-uid")).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetName() == "refused" {
				return quota
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	rec := events.NewFakeRecorder(10)
	var logs []string
	ctx := ctrl.LoggerInto(context.Background(), funcr.New(func(prefix, args string) { logs = append(logs, args) }, funcr.Options{Verbosity: 2}))
	o := Owner{Client: cl, Recorder: rec, Object: owner()}

	// One per batch, so that the order of events is fixed: slow start runs the first alone.
	err := Create(ctx, o, []Creation{{Object: pod("new", "owner-uid"), Created: "created pod new", Creating: "creating pod new"}}, same)
	if err != nil {
		t.Fatal(err)
	}
	if err := Create(ctx, o, []Creation{{Object: pod("exists", "owner-uid"), Created: "created pod exists"}}, same); err != nil {
		t.Errorf("AlreadyExists: %v, want no error", err)
	}
	if err := Create(ctx, o, []Creation{{Object: pod("refused", "owner-uid"), Creating: "creating pod refused"}}, same); !errors.Is(err, quota) {
		t.Errorf("refused create: %v, want %v", err, quota)
	}
	want := []string{"Normal SuccessfulCreatePod created pod new", "Warning FailedCreatePod creating pod refused: quota exceeded"}
	if diff := cmp.Diff(want, recorded(rec)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(logs) != 1 || !strings.Contains(logs[0], `"level"=2 "msg"="created pod" "pod"={"name"="new" "namespace"="ns"} "configmap"={"name"="j" "namespace"="ns"}`) {
		t.Errorf("logs %q; want one V(2) line for the created pod", logs)
	}
}

func TestDeleteTreatsGoneAsDone(t *testing.T) {
	cl := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(pod("old", "owner-uid")).Build()
	rec := events.NewFakeRecorder(10)
	o := Owner{Client: cl, Recorder: rec, Object: owner()}
	err := Delete(context.Background(), o, []Deletion{
		{Object: pod("old", "owner-uid"), Deleting: "deleting pod old"},
		{Object: pod("gone", "owner-uid"), Deleting: "deleting pod gone"},
	}, same)
	if err != nil {
		t.Errorf("Delete: %v, want nil", err)
	}
	if ev := recorded(rec); len(ev) != 0 {
		t.Errorf("events %v; want none", ev)
	}
}
