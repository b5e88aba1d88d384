package owned

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// TestCreatedMessageBounded: long names are listed up to the bound and the rest counted, so the
// note stays within an event's 1 KiB.
func TestCreatedMessageBounded(t *testing.T) {
	var created []Creation
	for i := range 64 {
		created = append(created, Creation{Object: pod(fmt.Sprintf("%s-%02d", strings.Repeat("n", 240), i), "")})
	}
	msg := createdMessage(created)
	listed := strings.Count(msg, strings.Repeat("n", 240))
	if !strings.HasPrefix(msg, "created 64 pods: "+strings.Repeat("n", 240)+"-00, ") || !strings.HasSuffix(msg, fmt.Sprintf(" and %d more", 64-listed)) ||
		len(msg) > maxEventNamesBytes+len(" and 64 more") || listed < 2 {
		t.Errorf("message of %d bytes listing %d names: %.120q … %q; want the first names within %d bytes and the rest counted", len(msg), listed, msg, msg[max(0, len(msg)-40):], maxEventNamesBytes)
	}
}

// TestCreateRecordsOneEventPerBatch: 200 pods, one refused, are 8 slow-start batches: an event
// for each batch's created pods, named as far as an event's note allows, and a warning for the
// refused one, which stops the creates after its batch.
func TestCreateRecordsOneEventPerBatch(t *testing.T) {
	quota := errors.New("quota exceeded")
	cl := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(pod("w-003", "owner-uid")).
		WithInterceptorFuncs(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetName() == "w-100" {
				return quota
			}
			return c.Create(ctx, obj, opts...)
		}}).Build()
	rec := events.NewFakeRecorder(20)
	o := Owner{Client: cl, Recorder: rec, Object: owner()}
	names := make([]string, 200)
	for i := range names {
		names[i] = fmt.Sprintf("w-%03d", i)
	}
	err := Create(context.Background(), o, names, func(name string) Creation {
		return Creation{Object: pod(name, "owner-uid"), Created: "created pod " + name, Creating: "creating pod " + name}
	})
	if !errors.Is(err, quota) {
		t.Fatalf("Create: %v, want %v", err, quota)
	}
	// Batches of 1, 2, 4, 8, 16, 32, 64: w-000 … w-126. w-003 existed already; w-100, in the last,
	// was refused.
	got := recorded(rec)
	want := []string{
		"Normal SuccessfulCreatePod created pod w-000",
		"Normal SuccessfulCreatePod created 2 pods: w-001, w-002",
		"Normal SuccessfulCreatePod created 3 pods: w-004, w-005, w-006",
		"Normal SuccessfulCreatePod created 8 pods: w-007, w-008, w-009, w-010, w-011, w-012, w-013, w-014",
	}
	if len(got) != 8 || !slices.Equal(got[:4], want) {
		t.Fatalf("events %q; want %q, then batches of 16 and 32, the refusal and 63 created", got, want)
	}
	if !slices.Contains(got, "Warning FailedCreatePod creating pod w-100: quota exceeded") {
		t.Errorf("events %q; want the refusal of w-100", got)
	}
	if last := got[len(got)-1]; !strings.HasPrefix(last, "Normal SuccessfulCreatePod created 63 pods: w-063, w-064, ") || !strings.HasSuffix(last, ", w-099, w-101, w-102, w-103, w-104, w-105, w-106, w-107, w-108, w-109, w-110, w-111, w-112, w-113, w-114, w-115, w-116, w-117, w-118, w-119, w-120, w-121, w-122, w-123, w-124, w-125, w-126") {
		t.Errorf("the last batch's event %q; want its 63 pods named, w-063 to w-126 but w-100", last)
	}
	// Every object was created once whatever the events say.
	var pods corev1.PodList
	if err := cl.List(context.Background(), &pods); err != nil || len(pods.Items) != 126 {
		t.Errorf("%d pods stored (%v), want 126: w-000 to w-126 but w-100", len(pods.Items), err)
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
