package mxjob

import (
	"time"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// activeDeadline is when runPolicy.activeDeadlineSeconds fails the job, counted from start (which
// a suspend clears, so the deadline counts from the resume); false when the job has none.
func activeDeadline(job *v1beta1.MxJob, start time.Time) (time.Time, bool) {
	secs := job.Spec.RunPolicy.ActiveDeadlineSeconds
	if secs == nil {
		return time.Time{}, false
	}
	return start.Add(time.Duration(*secs) * time.Second), true
}
