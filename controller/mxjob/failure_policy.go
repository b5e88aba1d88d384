package mxjob

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// permanentFailure says whether a failed pod fails the job under policy p.
func permanentFailure(p v1beta1.RestartPolicy, code int32) (bool, string) {
	switch p {
	case v1beta1.RestartPolicyExitCode:
		// 1-127 is the program's own verdict; 128+ is a signal (OOM kill, preemption): retry.
		if code >= 1 && code <= 127 {
			return true, fmt.Sprintf("exit code %d is permanent under restartPolicy ExitCode (1-127)", code)
		}
		return false, ""
	case v1beta1.RestartPolicyOnFailure, v1beta1.RestartPolicyAlways:
		return false, "" // the pod itself failed (eviction, node loss): recreate it
	default:
		return true, fmt.Sprintf("exit code %d under restartPolicy Never", code)
	}
}

// exitCode is the exit code that failed the pod: the mxnet container's, else the first non-zero
// one; -1 when no container terminated (the pod was evicted or its node lost).
func exitCode(pod *corev1.Pod) int32 {
	code := int32(-1)
	for _, cs := range pod.Status.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil {
			continue
		}
		if cs.Name == v1beta1.DefaultContainerName {
			return t.ExitCode
		}
		if code == -1 && t.ExitCode != 0 {
			code = t.ExitCode
		}
	}
	return code
}

// backoffLimitExceeded applies runPolicy.backoffLimit to restarts, the recreated pods counted in
// status plus the containers the kubelet restarted in place.
func backoffLimitExceeded(job *v1beta1.MxJob, restarts int32) (bool, string) {
	limit := job.Spec.RunPolicy.BackoffLimit
	if limit == nil || restarts <= *limit {
		return false, ""
	}
	return true, fmt.Sprintf("%d restarts exceed runPolicy.backoffLimit %d", restarts, *limit)
}
