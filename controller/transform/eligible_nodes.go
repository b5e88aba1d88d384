package transform

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// eligibleNodes are the schedulable nodes the Transform's node selector and tolerations admit.
func eligibleNodes(t *v1alpha1.Transform, nodes []corev1.Node) []string {
	sel := labels.SelectorFromSet(t.Spec.NodeSelector)
	var out []string
	for _, n := range nodes {
		if n.Spec.Unschedulable || n.DeletionTimestamp != nil || !sel.Matches(labels.Set(n.Labels)) || !tolerates(t.Spec.Tolerations, n.Spec.Taints) {
			continue
		}
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

func tolerates(tolerations []corev1.Toleration, taints []corev1.Taint) bool {
	for _, taint := range taints {
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Background(), &taint, false) }) {
			return false
		}
	}
	return true
}
