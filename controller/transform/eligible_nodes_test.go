package transform

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestEligibleNodesPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"node selector and taints pick the nodes": {
			tr: func() *v1alpha1.Transform {
				tr := echoTransform()
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
			want: planWant{stage: v1alpha1.StageInitializing, createOn: []string{"node-1"}, nodesReady: "0/1", reason: "ready on 0 of 1"},
		},
		"no eligible node": {
			tr: echoTransform(), nodes: []corev1.Node{node("node-1", func(n *corev1.Node) { n.Spec.Unschedulable = true })},
			want: planWant{stage: v1alpha1.StageInitializing, nodesReady: "0/0", reason: "no schedulable node"},
		},
	})
}

func TestEligibleNodes(t *testing.T) {
	ssd := func(n *corev1.Node) { n.Labels["disk"] = "ssd" }
	taint := func(effect corev1.TaintEffect) func(*corev1.Node) {
		return func(n *corev1.Node) { n.Spec.Taints = []corev1.Taint{{Key: "gpu", Effect: effect}} }
	}
	cases := map[string]struct {
		selector    map[string]string
		tolerations []corev1.Toleration
		nodes       []corev1.Node
		want        []string
	}{
		"every schedulable node, sorted": {nodes: []corev1.Node{node("node-2"), node("node-1")}, want: []string{"node-1", "node-2"}},
		"the node selector picks":        {selector: map[string]string{"disk": "ssd"}, nodes: []corev1.Node{node("node-1", ssd), node("node-2")}, want: []string{"node-1"}},
		"unschedulable and deleted nodes are not": {nodes: []corev1.Node{
			node("node-1", func(n *corev1.Node) { n.Spec.Unschedulable = true }),
			node("node-2", func(n *corev1.Node) { n.DeletionTimestamp = &metav1.Time{Time: now} }),
			node("node-3"),
		}, want: []string{"node-3"}},
		"a taint keeps the pods off":            {nodes: []corev1.Node{node("node-1", taint(corev1.TaintEffectNoSchedule)), node("node-2")}, want: []string{"node-2"}},
		"unless tolerated":                      {tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}, nodes: []corev1.Node{node("node-1", taint(corev1.TaintEffectNoExecute))}, want: []string{"node-1"}},
		"PreferNoSchedule is only a preference": {nodes: []corev1.Node{node("node-1", taint(corev1.TaintEffectPreferNoSchedule))}, want: []string{"node-1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr := &v1alpha1.Transform{Spec: v1alpha1.TransformSpec{NodeSelector: tc.selector, Tolerations: tc.tolerations}}
			if diff := cmp.Diff(tc.want, eligibleNodes(tr, tc.nodes)); diff != "" {
				t.Errorf("eligibleNodes (-want +got):\n%s", diff)
			}
		})
	}
}
