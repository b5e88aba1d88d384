package transformrun

import (
	"time"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// ttlAfterFinished applies spec.ttlSecondsAfterFinished to the run's planned status: a finished
// run is deleted once the TTL has passed since its completion, and until then the reconcile comes
// back for it.
func ttlAfterFinished(ttl *int32, p *plan, now time.Time) {
	left, ok := ttlLeft(ttl, &p.status, now)
	switch {
	case !ok:
	case left > 0:
		p.requeueAfter = left
	default:
		p.deleteRun = true
	}
}

// ttlLeft is how long a run of status st has left before it is deleted; ok is false when it is
// not finished or has no TTL.
func ttlLeft(ttl *int32, st *v1alpha1.TransformRunStatus, now time.Time) (left time.Duration, ok bool) {
	if ttl == nil || !finished(st.Phase) || st.CompletionTime == nil {
		return 0, false
	}
	return st.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(now), true
}
