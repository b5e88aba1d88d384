package transform

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/controller/internal/owned"
)

// podFailure says why a transformer pod has failed, or "" while it is healthy or starting: its
// container exited, the pod failed, or it was not ready within limit (spec.initTimeout). What
// follows a failure is spec.failurePolicy's: abort, or restartAfterBackoff.
func podFailure(pod *corev1.Pod, limit time.Duration, now time.Time) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil {
			return fmt.Sprintf("transformer container exited with code %d (%s) %s", term.ExitCode, term.Reason, strings.TrimSpace(term.Message))
		}
	}
	if pod.Status.Phase == corev1.PodFailed {
		return fmt.Sprintf("transformer pod failed: %s %s", pod.Status.Reason, pod.Status.Message)
	}
	if initTimedOut(pod, limit, now) {
		return fmt.Sprintf("transformer not ready within spec.initTimeout (%s)", limit)
	}
	return ""
}

// abort applies failurePolicy Abort to the failures of a reconcile: every pod goes and the
// Transform is Aborted, naming them.
func abort(pods []corev1.Pod, p *plan, failures []string, now time.Time) {
	p.deleteEveryPod(pods)
	setStage(&p.status, v1alpha1.StageAborted, v1alpha1.ReasonTransformerFailed, strings.Join(failures, "; "), now)
	p.createOn, p.requeueAfter = nil, 0
}

// stillAborted: an Aborted Transform stays aborted until its spec changes (kubectl etl stop, then
// start), so that a failing transformer is not started over and over.
func stillAborted(t *v1alpha1.Transform) bool {
	return t.Status.Stage == v1alpha1.StageAborted && t.Status.ObservedGeneration == t.Generation
}

// restartAfterBackoff replaces a failed pod once its backoff has passed (failurePolicy Restart).
func restartAfterBackoff(pod *corev1.Pod, ns *v1alpha1.NodeStatus, p *plan, now time.Time) {
	wait := owned.Backoff(ns.Restarts + 1) // ns.Restarts counts the replacements before this one
	failedAt := pod.CreationTimestamp.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(failedAt) {
			failedAt = term.FinishedAt.Time
		}
	}
	if due := failedAt.Add(wait); due.After(now) {
		p.requeue(due.Sub(now))
		return
	}
	ns.Restarts++
	p.deletePods = append(p.deletePods, pod)
}
