package transformrun

import (
	"slices"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// nodeFailuresFailRun applies spec.continueOnError to a run with failed of its total nodes
// failed and done finished: without it the first failed node fails the run; with it the run goes
// on until every node has finished, so that the others transform all they can.
func nodeFailuresFailRun(spec *v1alpha1.TransformRunSpec, failed, done, total int) bool {
	return failed > 0 && (!spec.ContinueOnError || done == total)
}

// failureStopsRun names the failed node that, without spec.continueOnError, fails the run, so
// that its other shares are stopped at once rather than run on for a run already failed; "" when
// none does.
func failureStopsRun(spec *v1alpha1.TransformRunSpec, nodes []v1alpha1.RunNodeStatus) string {
	if spec.ContinueOnError {
		return ""
	}
	i := slices.IndexFunc(nodes, func(n v1alpha1.RunNodeStatus) bool { return n.Phase == v1alpha1.RunFailed })
	if i < 0 {
		return ""
	}
	return nodes[i].Node
}
