package manager

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// maxCached is what one cached pod or Service may cost, as JSON: a few KiB whatever its size.
const maxCached = 4 << 10

// cacheTransform is the manager's cache transform of obj's type.
func cacheTransform(t *testing.T, obj client.Object) func(any) (any, error) {
	t.Helper()
	for o, by := range CacheOptions(DefaultOptions()).ByObject {
		if reflect.TypeOf(o) == reflect.TypeOf(obj) {
			if by.Transform == nil {
				return func(o any) (any, error) { return o, nil } // cached whole
			}
			return by.Transform
		}
	}
	t.Fatalf("%T is not in the cache options", obj)
	return nil
}

// cached is what the manager's cache keeps of obj, failing when it costs more than maxCached.
func cached[T client.Object](t *testing.T, obj T) T {
	t.Helper()
	out, err := cacheTransform(t, obj)(obj)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > maxCached {
		t.Errorf("the cache keeps %d bytes of a %T, want at most %d", len(b), obj, maxCached)
	}
	return out.(T)
}

var (
	created  = metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	finished = metav1.NewTime(created.Add(time.Minute))
	mib      = strings.Repeat("x", 1<<20)
)

func controllerRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: new(true), BlockOwnerDeletion: new(true)}
}

// fatPod carries everything a tenant can make large next to everything the reconcilers read.
func fatPod(owner metav1.OwnerReference) *corev1.Pod {
	env := make([]corev1.EnvVar, 1000)
	for i := range env {
		env[i] = corev1.EnvVar{Name: "V", Value: strings.Repeat("v", 100)}
	}
	refs := []metav1.OwnerReference{owner}
	for range 1000 {
		refs = append(refs, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "u"})
	}
	lbls := map[string]string{
		labels.ManagedBy: labels.ManagedByValue, v1beta1.LabelJobName: "j", v1beta1.LabelReplicaType: "worker",
		v1beta1.LabelReplicaIndex: "0", v1alpha1.LabelName: "t",
	}
	for i := range 1000 {
		lbls[strings.Repeat("k", 40)+string(rune('a'+i%26))+strings.Repeat("0", i/26)] = strings.Repeat("l", 63)
	}
	container := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: "img", Command: []string{mib}, Args: []string{mib}, Env: env,
			Ports: []corev1.ContainerPort{{Name: v1alpha1.DefaultPortName, ContainerPort: 8080}}}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "j-worker-0", Namespace: "ns", UID: "pod-uid", ResourceVersion: "7", CreationTimestamp: created,
			DeletionTimestamp: &finished, Labels: lbls, OwnerReferences: refs, Finalizers: []string{mib},
			Annotations:   map[string]string{v1alpha1.LabelNode: "node-1", v1alpha1.AnnotationTokenKey: "k1", "big": mib},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: mib}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever,
			Containers:     []corev1.Container{container("mxnet"), container("sidecar")},
			InitContainers: []corev1.Container{container("init")},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodFailed, PodIP: "10.0.0.1", StartTime: &created, Reason: "Evicted", Message: mib,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Message: mib},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Message: mib},
			},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "mxnet", Image: mib, RestartCount: 3, Started: new(false),
					State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", Message: mib, FinishedAt: finished}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: mib}}},
				{Name: "sidecar", Ready: true, Started: new(true), RestartCount: 1,
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}}},
			},
		},
	}
}

// TestCachedPodIsSlim: a pod with the managed-by label, megabytes of annotations, env, command,
// args, status messages and owner references costs the cache a few KiB, and keeps everything the
// MxJob and Transform reconcilers read of it.
func TestCachedPodIsSlim(t *testing.T) {
	for _, owner := range []metav1.OwnerReference{
		controllerRef("mxnet.mlkube.io/v1beta1", "MxJob", "j", "job-uid"),
		controllerRef("etl.mlkube.io/v1alpha1", "Transform", "t", "transform-uid"),
	} {
		t.Run(owner.Kind, func(t *testing.T) {
			got := cached(t, fatPod(owner))
			clipped := mib[:maxMessage-len("Evicted")]
			want := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{
					Name: "j-worker-0", Namespace: "ns", UID: "pod-uid", ResourceVersion: "7", CreationTimestamp: created,
					DeletionTimestamp: &finished, OwnerReferences: []metav1.OwnerReference{owner},
					Labels: map[string]string{
						labels.ManagedBy: labels.ManagedByValue, v1beta1.LabelJobName: "j", v1beta1.LabelReplicaType: "worker",
						v1beta1.LabelReplicaIndex: "0", v1alpha1.LabelName: "t",
					},
					Annotations: map[string]string{v1alpha1.LabelNode: "node-1", v1alpha1.AnnotationTokenKey: "k1"},
				},
				Spec: corev1.PodSpec{
					NodeName: "node-1", RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{
						{Name: "mxnet", Ports: []corev1.ContainerPort{{Name: v1alpha1.DefaultPortName, ContainerPort: 8080}}},
						{Name: "sidecar"},
					},
				},
				Status: corev1.PodStatus{
					Phase: corev1.PodFailed, PodIP: "10.0.0.1", StartTime: &created, Reason: "Evicted", Message: clipped,
					Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
					ContainerStatuses: []corev1.ContainerStatus{
						{Name: "mxnet", RestartCount: 3, Started: new(false),
							State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, FinishedAt: finished}}},
						{Name: "sidecar", Ready: true, Started: new(true), RestartCount: 1},
					},
				},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("cached pod (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCachedPodStatusTextIsBudgeted: the pod's and its containers' status texts share one budget,
// the first ones first (a Transform reports its first terminated container's).
func TestCachedPodStatusTextIsBudgeted(t *testing.T) {
	pod := fatPod(controllerRef("mxnet.mlkube.io/v1beta1", "MxJob", "j", "job-uid"))
	pod.Status.Reason, pod.Status.Message = "", "é"+strings.Repeat("ü", maxMessage) // two bytes a character
	pod.Status.ContainerStatuses[0].State.Terminated.Message = "exited"
	got := cached(t, pod)
	if n := len(got.Status.Message); n != maxMessage-1 && n != maxMessage {
		t.Errorf("pod message of %d bytes, want the budget's %d", n, maxMessage)
	}
	if !strings.HasPrefix(got.Status.Message, "é") || strings.ContainsRune(got.Status.Message, '\uFFFD') {
		t.Errorf("pod message %q... is not cut at a character's start", got.Status.Message[:8])
	}
	term := got.Status.ContainerStatuses[0].State.Terminated
	if term.Reason != "" || term.Message != "" {
		t.Errorf("container reason %q message %q, want nothing: the budget is spent", term.Reason, term.Message)
	}
}

// TestCachedForgedPodIsABareName: a pod with the managed-by label that no mlkube object controls
// (none, another kind, an unknown version, a name no object can have) is cached as its identity
// alone: no labels for a reconcile's list to match and no owner for its events to enqueue.
func TestCachedForgedPodIsABareName(t *testing.T) {
	for name, owner := range map[string]*metav1.OwnerReference{
		"no controller":         nil,
		"a ReplicaSet":          new(controllerRef("apps/v1", "ReplicaSet", "rs", "rs-uid")),
		"an unknown version":    new(controllerRef("mxnet.mlkube.io/"+mib, "MxJob", "j", "job-uid")),
		"an over-long name":     new(controllerRef("mxnet.mlkube.io/v1beta1", "MxJob", mib, "job-uid")),
		"an over-long UID":      new(controllerRef("etl.mlkube.io/v1alpha1", "Transform", "t", types.UID(mib))),
		"not the controller":    {APIVersion: "mxnet.mlkube.io/v1beta1", Kind: "MxJob", Name: "j", UID: "job-uid"},
		"another group's MxJob": new(controllerRef("mxnet.example.com/v1beta1", "MxJob", "j", "job-uid")),
	} {
		t.Run(name, func(t *testing.T) {
			pod := fatPod(metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "u"})
			pod.OwnerReferences = nil
			if owner != nil {
				pod.OwnerReferences = []metav1.OwnerReference{*owner}
			}
			want := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
				Name: "j-worker-0", Namespace: "ns", UID: "pod-uid", ResourceVersion: "7", CreationTimestamp: created,
				DeletionTimestamp: &finished,
			}}
			if diff := cmp.Diff(want, cached(t, pod)); diff != "" {
				t.Errorf("cached pod (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCachedServiceIsItsName: the MxJob reconciler reads only a Service's name, labels and owner.
func TestCachedServiceIsItsName(t *testing.T) {
	owner := controllerRef("mxnet.mlkube.io/v1beta1", "MxJob", "j", "job-uid")
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name: "j-worker-0", Namespace: "ns", UID: "svc-uid", ResourceVersion: "7",
			Labels:          map[string]string{labels.ManagedBy: labels.ManagedByValue, v1beta1.LabelJobName: "j", "big": strings.Repeat("l", 63)},
			Annotations:     map[string]string{"big": mib},
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"big": mib}, ExternalIPs: []string{mib}},
	}
	want := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Name: "j-worker-0", Namespace: "ns", UID: "svc-uid", ResourceVersion: "7",
		Labels:          map[string]string{labels.ManagedBy: labels.ManagedByValue, v1beta1.LabelJobName: "j"},
		OwnerReferences: []metav1.OwnerReference{owner},
	}}
	if diff := cmp.Diff(want, cached(t, svc)); diff != "" {
		t.Errorf("cached Service (-want +got):\n%s", diff)
	}
}
