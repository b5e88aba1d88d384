package transform

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/transform/podspec"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/transform"
)

// devImages are the images pods run unless the manager is given others.
var devImages = wire.DefaultPodImages()

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func defaulted(b *builders.TransformBuilder) *v1alpha1.Transform {
	t := b.Obj()
	t.UID, t.Generation = "t-uid", 1
	transform.Default(t)
	return t
}

func node(name string, edit ...func(*corev1.Node)) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
	for _, e := range edit {
		e(&n)
	}
	return n
}

// tpod is the transformer pod on node, created ago, ready or not, with optional edits.
func tpod(t *v1alpha1.Transform, nodeName string, ago time.Duration, ready bool, edit ...func(*corev1.Pod)) corev1.Pod {
	p := podspec.Build(t, nodeName, devImages)
	p.UID = types.UID("uid-" + nodeName)
	p.CreationTimestamp = metav1.NewTime(now.Add(-ago))
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = "10.0.0." + nodeName[len(nodeName)-1:]
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	for _, e := range edit {
		e(p)
	}
	return *p
}

func exited(code int32, ago time.Duration) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "transformer", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error", FinishedAt: metav1.NewTime(now.Add(-ago))}}}}
	}
}

// echoTransform is a runtime Transform as stored; restartingTransform is one under
// failurePolicy Restart.
func echoTransform() *v1alpha1.Transform {
	return defaulted(builders.Transform("echo").Runtime("mlkube/transformer-echo:dev"))
}

func restartingTransform() *v1alpha1.Transform {
	tr := echoTransform()
	tr.Spec.FailurePolicy = v1alpha1.FailureRestart
	return tr
}

func twoNodes() []corev1.Node { return []corev1.Node{node("node-1"), node("node-2")} }

// planWant is what a test checks of a plan; reason need only be contained in status.reason, and
// deletePods are named by their nodes.
type planWant struct {
	stage      v1alpha1.Stage
	createOn   []string
	deletePods []string
	nodesReady string
	reason     string
	requeue    time.Duration
}

// planCase is one reconcile's inputs and its plan's wants.
type planCase struct {
	tr    *v1alpha1.Transform
	nodes []corev1.Node
	pods  []corev1.Pod
	want  planWant
}

// testPlans runs each case through computePlan, as the reconciler does: each policy's tests
// drive it so.
func testPlans(t *testing.T, cases map[string]planCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := computePlan(tc.tr, tc.nodes, tc.pods, nil, now)
			got := planWant{stage: p.status.Stage, createOn: p.createOn, nodesReady: p.status.NodesReady, requeue: p.requeueAfter, reason: tc.want.reason}
			for _, d := range p.deletePods {
				got.deletePods = append(got.deletePods, d.Annotations[v1alpha1.LabelNode])
			}
			if !strings.Contains(p.status.Reason, tc.want.reason) {
				t.Errorf("reason %q does not contain %q", p.status.Reason, tc.want.reason)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(planWant{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputePlan holds what no single policy decides: a transformer per eligible node, the
// stages, nodes joining and leaving. Each policy's cases are in its own file's test.
func TestComputePlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"one pod per node": {
			tr: echoTransform(), nodes: twoNodes(),
			want: planWant{stage: v1alpha1.StageInitializing, createOn: []string{"node-1", "node-2"}, nodesReady: "0/2", reason: "ready on 0 of 2"},
		},
		"every transformer ready": {
			tr: echoTransform(), nodes: twoNodes(), pods: []corev1.Pod{tpod(echoTransform(), "node-1", time.Minute, true), tpod(echoTransform(), "node-2", time.Minute, true)},
			want: planWant{stage: v1alpha1.StageRunning, nodesReady: "2/2", reason: "ready on 2 nodes"},
		},
		"a node that left loses its pod; one that joined gets one": {
			tr: func() *v1alpha1.Transform {
				tr := echoTransform()
				tr.Status.Stage = v1alpha1.StageRunning
				tr.Status.Nodes = []v1alpha1.NodeStatus{{Node: "node-1"}, {Node: "node-2"}}
				return tr
			}(),
			nodes: []corev1.Node{node("node-1"), node("node-3")},
			pods:  []corev1.Pod{tpod(echoTransform(), "node-1", time.Minute, true), tpod(echoTransform(), "node-2", time.Minute, true)},
			want:  planWant{stage: v1alpha1.StageInitializing, createOn: []string{"node-3"}, deletePods: []string{"node-2"}, nodesReady: "1/2", reason: "ready on 1 of 2"},
		},
	})
}

func TestNodeStatusRecordsPodAndAddress(t *testing.T) {
	tr := defaulted(builders.Transform("echo").Runtime("img"))
	p := computePlan(tr, []corev1.Node{node("node-1")}, []corev1.Pod{tpod(tr, "node-1", time.Minute, true)}, nil, now)
	want := []v1alpha1.NodeStatus{{Node: "node-1", Pod: "echo-" + v1alpha1.NodeHash("node-1"), IP: "10.0.0.1", Port: 8000, Ready: true}}
	if diff := cmp.Diff(want, p.status.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
}
