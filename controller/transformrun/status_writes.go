package transformrun

import (
	"time"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// shouldWrite decides whether a poll's status is written: at once when the run or a node changed
// phase (or the nodes were just chosen), otherwise at most once per interval, so that a run of
// millions of objects costs the API server a write every few seconds, never one per object.
// sinceWrite is the time since this manager last wrote the run's status, 0 when it has not.
func shouldWrite(old, next *v1alpha1.TransformRunStatus, sinceWrite, interval time.Duration) bool {
	if equality.Semantic.DeepEqual(old, next) {
		return false
	}
	if old.Phase != next.Phase || len(old.Nodes) != len(next.Nodes) || sinceWrite == 0 {
		return true
	}
	for i := range old.Nodes {
		if old.Nodes[i].Phase != next.Nodes[i].Phase {
			return true
		}
	}
	return sinceWrite >= interval
}
