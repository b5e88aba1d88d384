package transformrun

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// chooseNodes picks the nodes of a starting run, sorted. A node selector is the user's explicit
// choice and is taken as it is: a chosen node whose agent never answers fails its share after the
// grace period, with a reason, rather than being dropped silently. Without one, the run goes to
// every node whose agent pod is Ready and on which every stage's Transform reports its
// transformer ready; a stage with no Transform (or no ready node) leaves none.
func chooseNodes(run *v1alpha1.TransformRun, nodes []corev1.Node, agents map[string]string, transforms map[string]*v1alpha1.Transform) []string {
	var out []string
	if len(run.Spec.NodeSelector) > 0 {
		sel := labels.SelectorFromSet(run.Spec.NodeSelector)
		for _, n := range nodes {
			if n.DeletionTimestamp == nil && sel.Matches(labels.Set(n.Labels)) {
				out = append(out, n.Name)
			}
		}
		slices.Sort(out)
		return out
	}
	for node := range agents {
		// A copy needs no transformer: every node whose agent is ready.
		if run.Spec.Transform == "" || transformersReady(run.Spec.Transform, node, transforms) {
			out = append(out, node)
		}
	}
	slices.Sort(out)
	return out
}

// transformersReady: every stage's Transform reports node ready in its status.
func transformersReady(pipeline, node string, transforms map[string]*v1alpha1.Transform) bool {
	for _, s := range wire.SplitPipeline(pipeline) {
		t, ok := transforms[s]
		if !ok || !slices.ContainsFunc(t.Status.Nodes, func(n v1alpha1.NodeStatus) bool { return n.Node == node && n.Ready }) {
			return false
		}
	}
	return true
}
