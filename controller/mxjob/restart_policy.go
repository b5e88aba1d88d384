package mxjob

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/internal/owned"
)

// permanentFailure applies a replica's restartPolicy p to its failed pod: whether the failure
// fails the job, and why.
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

// retryFailedPod recreates a pod whose failure its restartPolicy retries: it counts the pod once,
// then deletes it (to be recreated) once its backoff has passed.
func retryFailedPod(pod *corev1.Pod, r replica, code int32, p *plan, now time.Time) {
	st := &p.status
	uid := string(pod.UID)
	if !slices.Contains(st.RestartingPods, uid) {
		st.RestartingPods = append(st.RestartingPods, uid)
		st.Restarts++
		p.events = append(p.events, owned.Event{Warning: true, Reason: v1beta1.ReasonReplicaRestarting,
			Message: fmt.Sprintf("%s failed with exit code %d; recreating it (restart %d)", r, code, st.Restarts)})
	}
	wait := owned.Backoff(st.Restarts) // st.Restarts already counts this restart
	if failedAt := failureTime(pod); failedAt.Add(wait).After(now) {
		p.requeue(failedAt.Add(wait).Sub(now))
		return
	}
	if pod.DeletionTimestamp == nil {
		p.deletePods = append(p.deletePods, pod)
	}
}

// pruneRestartingPods forgets counted pods that are gone: their replacements count afresh.
func pruneRestartingPods(st *v1beta1.MxJobStatus, pods []corev1.Pod) {
	st.RestartingPods = slices.DeleteFunc(st.RestartingPods, func(uid string) bool {
		return !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return string(p.UID) == uid })
	})
	if len(st.RestartingPods) == 0 {
		st.RestartingPods = nil
	}
}

// failureTime is when the pod failed: its last container termination, else its start.
func failureTime(pod *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(t) {
			t = term.FinishedAt.Time
		}
	}
	if t.IsZero() && pod.Status.StartTime != nil {
		t = pod.Status.StartTime.Time
	}
	return t
}
