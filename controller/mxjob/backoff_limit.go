package mxjob

import (
	"fmt"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// backoffLimitExceeded applies runPolicy.backoffLimit to restarts, the recreated pods counted in
// status plus the containers the kubelet restarted in place.
func backoffLimitExceeded(job *v1beta1.MxJob, restarts int32) (bool, string) {
	limit := job.Spec.RunPolicy.BackoffLimit
	if limit == nil || restarts <= *limit {
		return false, ""
	}
	return true, fmt.Sprintf("%d restarts exceed runPolicy.backoffLimit %d", restarts, *limit)
}
