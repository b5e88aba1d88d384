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
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/transform"
)

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
	p := buildPod(t, nodeName, devImages)
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

func TestComputePlan(t *testing.T) {
	echo := func() *v1alpha1.Transform {
		return defaulted(builders.Transform("echo").Runtime("mlkube/transformer-echo:dev"))
	}
	restart := func() *v1alpha1.Transform {
		tr := echo()
		tr.Spec.FailurePolicy = v1alpha1.FailureRestart
		return tr
	}
	two := []corev1.Node{node("node-1"), node("node-2")}
	type want struct {
		stage      v1alpha1.Stage
		createOn   []string
		deletePods []string
		nodesReady string
		reason     string
		requeue    time.Duration
	}
	cases := map[string]struct {
		tr    *v1alpha1.Transform
		nodes []corev1.Node
		pods  []corev1.Pod
		want  want
	}{
		"one pod per node": {
			tr: echo(), nodes: two,
			want: want{stage: v1alpha1.StageInitializing, createOn: []string{"node-1", "node-2"}, nodesReady: "0/2", reason: "ready on 0 of 2"},
		},
		"node selector and taints pick the nodes": {
			tr: func() *v1alpha1.Transform {
				tr := echo()
				tr.Spec.NodeSelector = map[string]string{"disk": "ssd"}
				return tr
			}(),
			nodes: []corev1.Node{
				node("node-1", func(n *corev1.Node) { n.Labels["disk"] = "ssd" }),
				node("node-2"),
				node("node-3", func(n *corev1.Node) {
					n.Labels["disk"] = "ssd"
					n.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}}
				}),
				node("node-4", func(n *corev1.Node) { n.Labels["disk"], n.Spec.Unschedulable = "ssd", true }),
			},
			want: want{stage: v1alpha1.StageInitializing, createOn: []string{"node-1"}, nodesReady: "0/1", reason: "ready on 0 of 1"},
		},
		"every transformer ready": {
			tr: echo(), nodes: two, pods: []corev1.Pod{tpod(echo(), "node-1", time.Minute, true), tpod(echo(), "node-2", time.Minute, true)},
			want: want{stage: v1alpha1.StageRunning, nodesReady: "2/2", reason: "ready on 2 nodes"},
		},
		"still starting: requeue at the init timeout": {
			tr: echo(), nodes: two, pods: []corev1.Pod{tpod(echo(), "node-1", 5*time.Second, true), tpod(echo(), "node-2", 5*time.Second, false)},
			want: want{stage: v1alpha1.StageInitializing, nodesReady: "1/2", reason: "ready on 1 of 2", requeue: 40 * time.Second},
		},
		"Abort: not ready within initTimeout aborts and deletes every pod": {
			tr: echo(), nodes: two, pods: []corev1.Pod{tpod(echo(), "node-1", time.Minute, true), tpod(echo(), "node-2", time.Minute, false)},
			want: want{stage: v1alpha1.StageAborted, deletePods: []string{"node-1", "node-2"}, reason: "node node-2: transformer not ready within spec.initTimeout (45s)"},
		},
		"Abort: a transformer that exits aborts": {
			tr: echo(), nodes: two, pods: []corev1.Pod{tpod(echo(), "node-1", time.Minute, true), tpod(echo(), "node-2", time.Minute, false, exited(2, time.Second))},
			want: want{stage: v1alpha1.StageAborted, deletePods: []string{"node-1", "node-2"}, reason: "node node-2: transformer container exited with code 2"},
		},
		"Aborted stays aborted for the same generation": {
			tr: func() *v1alpha1.Transform {
				tr := echo()
				tr.Status.Stage, tr.Status.ObservedGeneration = v1alpha1.StageAborted, 1
				return tr
			}(),
			nodes: two,
			want:  want{stage: v1alpha1.StageAborted},
		},
		"a new generation retries an aborted Transform": {
			tr: func() *v1alpha1.Transform {
				tr := echo()
				tr.Status.Stage, tr.Status.ObservedGeneration, tr.Generation = v1alpha1.StageAborted, 1, 3
				return tr
			}(),
			nodes: two,
			want:  want{stage: v1alpha1.StageInitializing, createOn: []string{"node-1", "node-2"}, nodesReady: "0/2", reason: "ready on 0 of 2"},
		},
		"Restart: a failed transformer waits out its backoff": {
			tr: restart(), nodes: two, pods: []corev1.Pod{tpod(restart(), "node-1", time.Minute, true), tpod(restart(), "node-2", time.Minute, false, exited(2, 2*time.Second))},
			want: want{stage: v1alpha1.StageInitializing, nodesReady: "1/2", reason: "ready on 1 of 2", requeue: 3 * time.Second},
		},
		"Restart: then it is replaced": {
			tr: restart(), nodes: two, pods: []corev1.Pod{tpod(restart(), "node-1", time.Minute, true), tpod(restart(), "node-2", time.Minute, false, exited(2, 10*time.Second))},
			want: want{stage: v1alpha1.StageInitializing, deletePods: []string{"node-2"}, nodesReady: "1/2", reason: "ready on 1 of 2"},
		},
		"stop deletes the pods": {
			tr: func() *v1alpha1.Transform {
				tr := echo()
				tr.Spec.Stopped = true
				return tr
			}(),
			nodes: two, pods: []corev1.Pod{tpod(echo(), "node-1", time.Minute, true), tpod(echo(), "node-2", time.Minute, true)},
			want: want{stage: v1alpha1.StageStopped, deletePods: []string{"node-1", "node-2"}, reason: "spec.stopped is true"},
		},
		"a node that left loses its pod; one that joined gets one": {
			tr: func() *v1alpha1.Transform {
				tr := echo()
				tr.Status.Stage = v1alpha1.StageRunning
				tr.Status.Nodes = []v1alpha1.NodeStatus{{Node: "node-1"}, {Node: "node-2"}}
				return tr
			}(),
			nodes: []corev1.Node{node("node-1"), node("node-3")},
			pods:  []corev1.Pod{tpod(echo(), "node-1", time.Minute, true), tpod(echo(), "node-2", time.Minute, true)},
			want:  want{stage: v1alpha1.StageInitializing, createOn: []string{"node-3"}, deletePods: []string{"node-2"}, nodesReady: "1/2", reason: "ready on 1 of 2"},
		},
		"no eligible node": {
			tr: echo(), nodes: []corev1.Node{node("node-1", func(n *corev1.Node) { n.Spec.Unschedulable = true })},
			want: want{stage: v1alpha1.StageInitializing, nodesReady: "0/0", reason: "no schedulable node"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := computePlan(tc.tr, tc.nodes, tc.pods, nil, now)
			got := want{stage: p.status.Stage, createOn: p.createOn, nodesReady: p.status.NodesReady, requeue: p.requeueAfter, reason: tc.want.reason}
			for _, d := range p.deletePods {
				got.deletePods = append(got.deletePods, d.Annotations[v1alpha1.LabelNode])
			}
			if !strings.Contains(p.status.Reason, tc.want.reason) {
				t.Errorf("reason %q does not contain %q", p.status.Reason, tc.want.reason)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeStatusRecordsPodAndAddress(t *testing.T) {
	tr := defaulted(builders.Transform("echo").Runtime("img"))
	p := computePlan(tr, []corev1.Node{node("node-1")}, []corev1.Pod{tpod(tr, "node-1", time.Minute, true)}, nil, now)
	want := []v1alpha1.NodeStatus{{Node: "node-1", Pod: "echo-" + v1alpha1.NodeHash("node-1"), IP: "10.0.0.1", Port: 8000, Ready: true}}
	if diff := cmp.Diff(want, p.status.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
}
