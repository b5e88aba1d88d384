package mxjob

import (
	"fmt"
	"time"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// activeDeadline applies runPolicy.activeDeadlineSeconds, counted from start (which a suspend
// clears, so the deadline counts from the resume): either the job has run past it, and why, or
// the time left until it does, for the reconcile to come back then; 0 when the job has none.
func activeDeadline(job *v1beta1.MxJob, start, now time.Time) (exceeded bool, why string, left time.Duration) {
	secs := job.Spec.RunPolicy.ActiveDeadlineSeconds
	if secs == nil {
		return false, "", 0
	}
	deadline := start.Add(time.Duration(*secs) * time.Second)
	if !now.Before(deadline) {
		return true, fmt.Sprintf("the job ran longer than runPolicy.activeDeadlineSeconds (%ds)", *secs), 0
	}
	return false, "", deadline.Sub(now)
}
