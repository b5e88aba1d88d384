package mxjob

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/internal/builders"
)

// counts records the API calls a reconcile made.
type counts struct {
	creates, deletes, statusWrites int
}

func newReconciler(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) (*Reconciler, *counts, *events.FakeRecorder) {
	t.Helper()
	c := &counts{}
	wrap := interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			c.creates++
			if funcs.Create != nil {
				return funcs.Create(ctx, cl, obj, opts...)
			}
			return cl.Create(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			c.deletes++
			if funcs.Delete != nil {
				return funcs.Delete(ctx, cl, obj, opts...)
			}
			return cl.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			c.statusWrites++
			if funcs.SubResourceUpdate != nil {
				return funcs.SubResourceUpdate(ctx, cl, sub, obj, opts...)
			}
			return cl.SubResource(sub).Update(ctx, obj, opts...)
		},
	}
	cl := fake.NewClientBuilder().WithScheme(scheme.New()).
		WithStatusSubresource(&v1beta1.MxJob{}).
		WithObjects(objs...).
		WithInterceptorFuncs(wrap).Build()
	rec := events.NewFakeRecorder(100)
	return &Reconciler{Client: cl, Recorder: rec, Clock: clocktesting.NewFakePassiveClock(now)}, c, rec
}

func request(job *v1beta1.MxJob) reconcile.Request {
	return reconcile.Request{NamespacedName: client.ObjectKeyFromObject(job)}
}

func drain(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestReconcileCreatesReplicasAndWritesStatusOnce(t *testing.T) {
	job := defaulted(builders.MxJob("j").Dist(1, 2))
	r, c, rec := newReconciler(t, interceptor.Funcs{}, job)
	if _, err := r.Reconcile(context.Background(), request(job)); err != nil {
		t.Fatal(err)
	}
	if c.creates != 8 || c.statusWrites != 1 {
		t.Errorf("creates %d, status writes %d; want 8 (4 pods, 4 Services) and 1", c.creates, c.statusWrites)
	}
	var pods corev1.PodList
	if err := r.List(context.Background(), &pods); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"j-scheduler-0", "j-server-0", "j-worker-0", "j-worker-1"}, names); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	var got v1beta1.MxJob
	if err := r.Get(context.Background(), client.ObjectKeyFromObject(job), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.State != v1beta1.StateRunning || got.Status.StartTime == nil {
		t.Errorf("status %+v; want Running with a start time", got.Status)
	}
	// One event per slow-start batch of pods: 1, then 2, then the last 1.
	wantEvents := []string{
		"Normal SuccessfulCreatePod created pod j-scheduler-0",
		"Normal SuccessfulCreatePod created 2 pods: j-server-0, j-worker-0",
		"Normal SuccessfulCreatePod created pod j-worker-1",
		"Normal MxJobCreated Created=True: the job was accepted",
	}
	if diff := cmp.Diff(wantEvents, drain(rec)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// The next reconcile sees the pods (active counts change); after it nothing changes.
	if _, err := r.Reconcile(context.Background(), request(job)); err != nil {
		t.Fatal(err)
	}
	c.creates, c.statusWrites = 0, 0
	if _, err := r.Reconcile(context.Background(), request(job)); err != nil {
		t.Fatal(err)
	}
	if c.creates != 0 || c.statusWrites != 0 {
		t.Errorf("a quiet reconcile made %d creates and %d status writes; want none", c.creates, c.statusWrites)
	}
}

func TestReconcileToleratesAlreadyExists(t *testing.T) {
	// A burst of events reconciles against a cache that has not seen the pods yet: the creates
	// hit AlreadyExists, which must be neither an error nor a duplicate.
	job := defaulted(builders.MxJob("j").Local())
	r, _, _ := newReconciler(t, interceptor.Funcs{Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
		return k8serrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, obj.GetName())
	}}, job)
	if _, err := r.Reconcile(context.Background(), request(job)); err != nil {
		t.Fatalf("AlreadyExists surfaced as %v", err)
	}
}

func TestReconcileReportsCreateFailures(t *testing.T) {
	job := defaulted(builders.MxJob("j").Local())
	boom := errors.New("quota exceeded")
	r, c, rec := newReconciler(t, interceptor.Funcs{Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if _, ok := obj.(*corev1.Pod); ok {
			return boom
		}
		return cl.Create(ctx, obj, opts...)
	}}, job)
	_, err := r.Reconcile(context.Background(), request(job))
	if !errors.Is(err, boom) {
		t.Fatalf("err %v; want the create failure", err)
	}
	if c.statusWrites != 1 {
		t.Errorf("status writes %d; want the status written despite the failure", c.statusWrites)
	}
	found := false
	for _, e := range drain(rec) {
		if e == "Warning FailedCreatePod creating pod j-worker-0: quota exceeded" {
			found = true
		}
	}
	if !found {
		t.Error("no FailedCreatePod warning event")
	}
}

func TestRetriedPodIsNotDeletedBeforeItsCountIsStored(t *testing.T) {
	job := started(withRestartPolicy(v1beta1.RestartPolicyExitCode), time.Minute)
	failed := pod(job, "worker-0", corev1.PodFailed, exited(137, time.Minute))
	objs := []client.Object{job, &failed}
	for _, name := range []string{"scheduler-0", "server-0", "worker-1"} {
		p := pod(job, name, corev1.PodRunning)
		objs = append(objs, &p)
	}
	conflict := k8serrors.NewConflict(schema.GroupResource{Resource: "mxjobs"}, job.Name, errors.New("stale"))
	r, c, _ := newReconciler(t, interceptor.Funcs{SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
		return conflict
	}}, objs...)
	if _, err := r.Reconcile(context.Background(), request(job)); !k8serrors.IsConflict(err) {
		t.Fatalf("err %v; want the conflict", err)
	}
	if c.deletes != 0 {
		t.Fatalf("the failed pod was deleted although its restart was never counted")
	}

	// Once the status can be written, the pod goes, counted exactly once.
	r, c, _ = newReconciler(t, interceptor.Funcs{}, objs...)
	for range 2 {
		if _, err := r.Reconcile(context.Background(), request(job)); err != nil {
			t.Fatal(err)
		}
	}
	var got v1beta1.MxJob
	if err := r.Get(context.Background(), client.ObjectKeyFromObject(job), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.Restarts != 1 || c.deletes != 1 {
		t.Errorf("restarts %d after %d deletes; want 1 and 1", got.Status.Restarts, c.deletes)
	}
}
