package transform

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/controller/transform/podspec"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/fuzzbytes"
	"github.com/mlkube/mlkube/webhook/transform"
)

var fuzzTaints = [][]corev1.Taint{
	nil,
	{{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}},
	{{Key: "gpu", Value: "a100", Effect: corev1.TaintEffectNoExecute}},
	{{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}},
	{{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoExecute}, {Key: "gpu", Effect: corev1.TaintEffectNoSchedule}},
}

// fuzzSpec sets the fields of a Transform's spec that decide where and whether it runs.
func fuzzSpec(s *fuzzbytes.Stream, spec *v1alpha1.TransformSpec) {
	spec.Stopped = s.Next()%4 == 0
	spec.NodeSelector = fuzzbytes.Pick(s, nil, map[string]string{"disk": "ssd"}, map[string]string{"disk": "ssd", "zone": "a"})
	spec.Tolerations = fuzzbytes.Pick(s, nil,
		[]corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
		[]corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpEqual, Value: "a100", Effect: corev1.TaintEffectNoExecute}},
		[]corev1.Toleration{{Operator: corev1.TolerationOpExists}})
	spec.FailurePolicy = fuzzbytes.Pick(s, v1alpha1.FailureAbort, v1alpha1.FailureRestart)
	spec.InitTimeout = fuzzbytes.Pick(s, nil, &metav1.Duration{Duration: 10 * time.Second}, &metav1.Duration{Duration: v1alpha1.MaxInitTimeout})
}

// fuzzNode makes the node called name with labels, taints, schedulability and readiness from the
// stream.
func fuzzNode(s *fuzzbytes.Stream, name string) corev1.Node {
	n := node(name)
	b := s.Next()
	if b&1 != 0 {
		n.Labels["disk"] = "ssd"
	}
	if b&2 != 0 {
		n.Labels["zone"] = "a"
	}
	n.Spec.Unschedulable = b&4 != 0 && b&8 != 0
	ready := corev1.ConditionTrue
	if b&16 != 0 {
		ready = corev1.ConditionFalse
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}
	if b&0xE0 == 0xE0 {
		n.DeletionTimestamp = &metav1.Time{Time: now}
	}
	n.Spec.Taints = fuzzbytes.Pick(s, fuzzTaints...)
	return n
}

// transformWorld is the cluster as one Transform's reconciles see it.
type transformWorld struct {
	tr    *v1alpha1.Transform
	nodes []corev1.Node
	pods  []corev1.Pod
	now   time.Time
	uids  int
	// joined counts the nodes that joined, for their unique names.
	joined int
}

// evolve moves the pods and nodes on as kubelets, the scheduler's users and people might.
func (w *transformWorld) evolve(s *fuzzbytes.Stream) {
	kept := w.pods[:0]
	for _, p := range w.pods {
		b := s.Next()
		st := &p.Status
		switch b % 9 {
		case 2:
			st.Phase, st.PodIP = corev1.PodRunning, "10.0.0.1"
			st.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: "transformer", Started: ptrTo(true), Ready: true}}
		case 3: // failing its readiness probe after it was ready
			st.Phase = corev1.PodRunning
			st.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
		case 4:
			st.Phase = corev1.PodFailed
			st.ContainerStatuses = []corev1.ContainerStatus{{Name: "transformer", State: corev1.ContainerState{
				Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(b / 9), Reason: "Error", FinishedAt: metav1.NewTime(w.now)}}}}
		case 5: // evicted
			st.Phase, st.Reason = corev1.PodFailed, "Evicted"
		case 6:
			p.DeletionTimestamp = &metav1.Time{Time: w.now}
		case 7: // deleted by hand
			continue
		}
		kept = append(kept, p)
	}
	w.pods = kept
	b := s.Next()
	if i := int(b>>4) % (len(w.nodes) + 1); i < len(w.nodes) {
		switch b % 4 {
		case 0: // relabelled, retainted, cordoned; a node keeps its name, which is unique
			w.nodes[i] = fuzzNode(s, w.nodes[i].Name)
		case 1: // gone
			w.nodes = slices.Delete(w.nodes, i, i+1)
		}
	}
	if s.Next()%8 == 0 {
		w.joined++
		w.nodes = append(w.nodes, fuzzNode(s, fmt.Sprintf("node-%d", 100+w.joined)))
	}
}

// apply carries a plan out.
func (w *transformWorld) apply(s *fuzzbytes.Stream, p plan) {
	w.tr.Status = *p.status.DeepCopy()
	terminating := s.Next()%2 == 0
	w.pods = slices.DeleteFunc(w.pods, func(pod corev1.Pod) bool {
		return !terminating && slices.ContainsFunc(p.deletePods, func(d *corev1.Pod) bool { return d.Name == pod.Name })
	})
	for i := range w.pods {
		if slices.ContainsFunc(p.deletePods, func(d *corev1.Pod) bool { return d.Name == w.pods[i].Name }) {
			w.pods[i].DeletionTimestamp = &metav1.Time{Time: w.now}
		}
	}
	for _, node := range p.createOn {
		pod := podspec.Build(w.tr, node, devImages)
		w.uids++
		pod.UID = types.UID(fmt.Sprintf("uid-%d", w.uids))
		pod.CreationTimestamp = metav1.NewTime(w.now)
		pod.Status.Phase = corev1.PodPending
		w.pods = append(w.pods, *pod)
	}
}

// FuzzTransformPlan runs a fuzzed Transform through a few reconciles while nodes come, go and
// change, and its pods become ready, fail and vanish, and checks every plan: it creates pods only
// on eligible nodes, at most one per node and none where the Transform's pod is; a stopped or
// aborted Transform creates nothing and a stopped one deletes every pod; it deletes only pods that
// exist and are not already going; and the plan is a pure function of its inputs.
func FuzzTransformPlan(f *testing.F) {
	f.Add([]byte{})                                           // one plain node, a new Transform
	f.Add([]byte{1, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 2, 2, 2})   // three nodes, pods come up ready
	f.Add([]byte{3, 1, 1, 1, 1, 1, 0, 0, 2, 3, 4, 10, 4, 4})  // selector and tolerations, a pod fails: Abort
	f.Add([]byte{1, 1, 1, 1, 1, 2, 1, 1, 1, 6, 0, 60, 7, 17}) // Restart, a pod exits and is replaced
	f.Add([]byte{4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 9})   // stopped
	f.Fuzz(func(t *testing.T, data []byte) {
		s := fuzzbytes.Stream(data)
		w := &transformWorld{tr: defaulted(builders.Transform("t").Runtime("img", "cmd")), now: now}
		fuzzSpec(&s, &w.tr.Spec)
		if errs := transform.ValidateCreate(w.tr); len(errs) > 0 {
			t.Fatalf("the generator made a Transform the webhook refuses: %v", errs)
		}
		for i := range 1 + int(s.Next()%5) {
			w.nodes = append(w.nodes, fuzzNode(&s, fmt.Sprintf("node-%d", i)))
		}
		for steps := 1 + int(s.Next()%6); steps > 0; steps-- {
			w.apply(&s, checkedPlan(t, w))
			w.now = w.now.Add(time.Duration(s.Next()) * fuzzbytes.Pick(&s, time.Second, time.Minute))
			if s.Next()%8 == 0 {
				fuzzSpec(&s, &w.tr.Spec)
				w.tr.Generation++
			}
			w.evolve(&s)
		}
	})
}

// TestAbortDeletesEachPodOnce: a pod whose node left is planned for deletion, and an abort in
// the same reconcile deletes every pod; the first was listed twice (found by FuzzTransformPlan).
func TestAbortDeletesEachPodOnce(t *testing.T) {
	tr := defaulted(builders.Transform("echo").Runtime("mlkube/transformer-echo:dev"))
	pods := []corev1.Pod{tpod(tr, "node-1", time.Minute, true), tpod(tr, "node-2", time.Minute, false)}
	p := computePlan(tr, []corev1.Node{node("node-2")}, pods, nil, now)
	var got []string
	for _, d := range p.deletePods {
		got = append(got, d.Annotations[v1alpha1.LabelNode])
	}
	if diff := cmp.Diff([]string{"node-1", "node-2"}, got); p.status.Stage != v1alpha1.StageAborted || diff != "" {
		t.Errorf("stage %s, deleted pods (-want +got):\n%s", p.status.Stage, diff)
	}
}

// TestNodesLeftInPodOrder: the pods of nodes that left were deleted, and their events told, in
// the random order of a map, so one reconcile's plan differed from the next on the same inputs
// (found by FuzzTransformPlan). Map order varies from run to run: 20 runs show it.
func TestNodesLeftInPodOrder(t *testing.T) {
	tr := defaulted(builders.Transform("echo").Runtime("mlkube/transformer-echo:dev"))
	var pods []corev1.Pod
	for _, n := range []string{"node-1", "node-2", "node-3", "node-4"} {
		pods = append(pods, tpod(tr, n, time.Minute, true))
	}
	for range 20 {
		var got []string
		for _, d := range computePlan(tr, []corev1.Node{node("node-5")}, pods, nil, now).deletePods {
			got = append(got, d.Annotations[v1alpha1.LabelNode])
		}
		if diff := cmp.Diff([]string{"node-1", "node-2", "node-3", "node-4"}, got); diff != "" {
			t.Fatalf("deleted pods (-want +got):\n%s", diff)
		}
	}
}

// checkedPlan computes the plan for w and checks its properties.
func checkedPlan(t *testing.T, w *transformWorld) plan {
	t.Helper()
	tr, nodes, pods := w.tr.DeepCopy(), cloneAll(w.nodes), cloneAll(w.pods)
	p := computePlan(w.tr, w.nodes, w.pods, nil, w.now)
	if !reflect.DeepEqual(tr, w.tr) || !reflect.DeepEqual(nodes, w.nodes) || !reflect.DeepEqual(pods, w.pods) {
		t.Fatal("computePlan changed its inputs")
	}
	if again := computePlan(tr, nodes, pods, nil, w.now); !reflect.DeepEqual(p, again) {
		t.Fatalf("computePlan is not deterministic (-first +second):\n%s",
			cmp.Diff(p, again, cmp.Exporter(func(reflect.Type) bool { return true })))
	}

	eligible := map[string]bool{}
	for _, n := range w.nodes {
		eligible[n.Name] = admits(&w.tr.Spec, &n)
	}
	hasPod := map[string]bool{}
	for _, pod := range w.pods {
		hasPod[pod.Annotations[v1alpha1.LabelNode]] = true
	}
	created := map[string]bool{}
	for _, node := range p.createOn {
		switch {
		case !eligible[node]:
			t.Fatalf("the plan creates a pod on %s, which the Transform may not run on", node)
		case hasPod[node]:
			t.Fatalf("the plan creates a pod on %s, which has the Transform's pod", node)
		case created[node]:
			t.Fatalf("the plan creates two pods on %s", node)
		}
		created[node] = true
	}
	aborted := w.tr.Status.Stage == v1alpha1.StageAborted && w.tr.Status.ObservedGeneration == w.tr.Generation
	if (w.tr.Spec.Stopped || aborted) && len(p.createOn) > 0 {
		t.Fatalf("a stopped (%v) or aborted (%v) Transform creates pods on %v", w.tr.Spec.Stopped, aborted, p.createOn)
	}
	deleted := map[string]bool{}
	for _, d := range p.deletePods {
		if !slices.ContainsFunc(w.pods, func(pod corev1.Pod) bool { return pod.Name == d.Name }) || d.DeletionTimestamp != nil || deleted[d.Name] {
			t.Fatalf("the plan deletes %s, which is gone, already going, or deleted twice: stage %s, events %+v", d.Name, p.status.Stage, p.events)
		}
		deleted[d.Name] = true
	}
	if w.tr.Spec.Stopped {
		for _, pod := range w.pods {
			if pod.DeletionTimestamp == nil && !deleted[pod.Name] {
				t.Fatalf("a stopped Transform keeps its pod %s", pod.Name)
			}
		}
	}
	return p
}

// admits says whether a Transform runs on n: schedulable, not going away, labelled as the
// node selector asks, and every hard taint tolerated.
func admits(spec *v1alpha1.TransformSpec, n *corev1.Node) bool {
	if n.Spec.Unschedulable || n.DeletionTimestamp != nil {
		return false
	}
	for k, v := range spec.NodeSelector {
		if got, ok := n.Labels[k]; !ok || got != v {
			return false
		}
	}
	for _, taint := range n.Spec.Taints {
		if taint.Effect != corev1.TaintEffectPreferNoSchedule && !slices.ContainsFunc(spec.Tolerations, func(tol corev1.Toleration) bool {
			return tol.ToleratesTaint(klog.Background(), &taint, false)
		}) {
			return false
		}
	}
	return true
}

func ptrTo[T any](v T) *T { return &v }

// cloneAll deep-copies objects, keeping nil nil.
func cloneAll[T any, P interface {
	*T
	DeepCopyInto(*T)
}](objs []T) []T {
	if objs == nil {
		return nil
	}
	out := make([]T, len(objs))
	for i := range objs {
		P(&objs[i]).DeepCopyInto(&out[i])
	}
	return out
}
