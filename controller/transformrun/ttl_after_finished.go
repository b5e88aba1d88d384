package transformrun

import (
	"time"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// ttlLeft is how long a finished run has left before it is deleted; ok is false when it is not
// finished or has no TTL.
func ttlLeft(run *v1alpha1.TransformRun, now time.Time) (left time.Duration, ok bool) {
	ttl := run.Spec.TTLSecondsAfterFinished
	if ttl == nil || !finished(run.Status.Phase) || run.Status.CompletionTime == nil {
		return 0, false
	}
	return run.Status.CompletionTime.Add(time.Duration(*ttl) * time.Second).Sub(now), true
}
