package mxjob

import (
	"fmt"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// succeeded applies the success policy: local, the worker succeeded; dist, the scheduler
// succeeded, or with AllWorkers every worker did.
func succeeded(job *v1beta1.MxJob, counts map[v1beta1.ReplicaType]*v1beta1.ReplicaStatus) (bool, string) {
	workers := count(job.Spec.ReplicaSpecFor(v1beta1.ReplicaTypeWorker))
	done := func(t v1beta1.ReplicaType) int32 {
		if c := counts[t]; c != nil {
			return c.Succeeded
		}
		return 0
	}
	switch {
	case job.Spec.JobMode == v1beta1.LocalMode:
		return workers > 0 && done(v1beta1.ReplicaTypeWorker) == workers, "the worker succeeded"
	case job.Spec.SuccessPolicy == v1beta1.SuccessPolicyAllWorkers:
		return workers > 0 && done(v1beta1.ReplicaTypeWorker) == workers, fmt.Sprintf("all %d workers succeeded", workers)
	default:
		return done(v1beta1.ReplicaTypeScheduler) == 1, "the scheduler succeeded"
	}
}
