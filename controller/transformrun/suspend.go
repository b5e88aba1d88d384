package transformrun

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// suspendReached: under spec.suspend the run is Suspended only once every node says its workers
// stopped. Until then objects are still being written, and a user who reads Suspended must be
// able to count on the data staying put.
func suspendReached(spec *v1alpha1.TransformRunSpec, nodes []v1alpha1.RunNodeStatus) bool {
	return spec.Suspend && !slices.ContainsFunc(nodes, stillWorking)
}

// stillWorking reports a node whose share may still write objects: neither finished, nor stopped,
// nor never started.
func stillWorking(n v1alpha1.RunNodeStatus) bool {
	return !finished(n.Phase) && n.Phase != v1alpha1.RunSuspended && n.Phase != v1alpha1.RunPending && n.Phase != ""
}

// resumedAt is when the run last resumed from a suspension, zero if it never did. A suspended run
// does not poll its stopped nodes, so their last answers may be old by the time it resumes: a
// silent agent's grace period runs from the resume at the earliest. setConditions turns Suspended
// False rather than dropping it so that its transition time tells.
func resumedAt(st *v1alpha1.TransformRunStatus) time.Time {
	for _, c := range st.Conditions {
		if c.Type == v1alpha1.RunConditionSuspended && c.Status == metav1.ConditionFalse {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}
