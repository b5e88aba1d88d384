package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/builders"
)

func createNode(t *testing.T, name string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "etl-test": t.Name()}}}
	k8s.CreateTemporary(t, n)
	// The API server taints new nodes not-ready (TaintNodesByCondition); play the node
	// lifecycle controller and clear it, as it does once the kubelet reports Ready.
	n.Spec.Taints = nil
	if err := k8s.Update(context.Background(), n); err != nil {
		t.Fatal(err)
	}
}

// createTransformOnNodes creates nodes and a Transform whose nodeSelector picks them alone, out
// of all the nodes the other tests make.
func createTransformOnNodes(t *testing.T, name string, nodes ...string) *v1alpha1.Transform {
	t.Helper()
	for _, n := range nodes {
		createNode(t, n)
	}
	tr := builders.Transform(name).Runtime("mlkube/transformer-echo:dev").Spec(func(s *v1alpha1.TransformSpec) {
		s.NodeSelector = map[string]string{"etl-test": t.Name()}
	}).Obj()
	k8s.MustCreate(t, tr)
	return tr
}

// markReady plays the kubelet: the pod runs and passes its readiness probe.
func markReady(t *testing.T, ctx context.Context, pod *corev1.Pod, ip string) {
	t.Helper()
	pod.Status.Phase, pod.Status.PodIP = corev1.PodRunning, ip
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}

func TestTransformLifecycle(t *testing.T) {
	ctx := context.Background()
	tr := createTransformOnNodes(t, "lifecycle", "etl-node-a", "etl-node-b")
	pods := k8s.WaitForPods(t, "one transformer pod per node", tr, 2)
	pinned := map[string]bool{}
	for _, p := range pods {
		term := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
		pinned[term.Values[0]] = true
	}
	if !pinned["etl-node-a"] || !pinned["etl-node-b"] {
		t.Fatalf("pods pinned to %v; want one on each node", pinned)
	}
	k8s.WaitForStage(t, tr, v1alpha1.StageInitializing)
	for i := range pods {
		markReady(t, ctx, &pods[i], fmt.Sprintf("10.1.0.%d", i+1))
	}
	got := k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	if got.Status.NodesReady != "2/2" || len(got.Status.Nodes) != 2 || !strings.HasPrefix(got.Status.Nodes[0].IP, "10.1.0.") {
		t.Errorf("status %+v; want 2/2 ready with pod IPs", got.Status)
	}

	// A node leaving takes its transformer with it.
	if err := k8s.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "etl-node-b"}}); err != nil {
		t.Fatal(err)
	}
	k8s.WaitForPods(t, "node b's pod deleted", tr, 1)

	// Stop deletes the pods and keeps the object; start brings them back.
	k8s.StopTransform(t, tr)
	k8s.StartTransform(t, tr)
	k8s.WaitForPods(t, "the pod back on start", tr, 1)
}

func TestTransformAbortsWhenATransformerExits(t *testing.T) {
	ctx := context.Background()
	tr := createTransformOnNodes(t, "abort", "etl-node-c")
	pods := k8s.WaitForPods(t, "the transformer pod", tr, 1)
	pod := &pods[0]
	pod.Status.Phase = corev1.PodFailed
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "transformer", Image: "x", ImageID: "x", State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", Message: "boom", FinishedAt: metav1.Now()}}}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	got := k8s.WaitForStage(t, tr, v1alpha1.StageAborted)
	if !strings.Contains(got.Status.Reason, "node etl-node-c: transformer container exited with code 3") {
		t.Errorf("reason %q does not say which node's transformer exited how", got.Status.Reason)
	}
	k8s.WaitForPods(t, "the aborted Transform's pods deleted", tr, 0)
}
