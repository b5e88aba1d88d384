package transform

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/controller/internal/owned"
)

// podFailure says why a transformer pod has failed, or "" while it is healthy or starting.
func podFailure(pod *corev1.Pod, timeout *metav1.Duration, now time.Time) string {
	for _, cs := range pod.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil {
			return fmt.Sprintf("transformer container exited with code %d (%s) %s", term.ExitCode, term.Reason, strings.TrimSpace(term.Message))
		}
	}
	if pod.Status.Phase == corev1.PodFailed {
		return fmt.Sprintf("transformer pod failed: %s %s", pod.Status.Reason, pod.Status.Message)
	}
	limit := v1alpha1.DefaultInitTimeout
	if timeout != nil {
		limit = timeout.Duration
	}
	if !podReady(pod) && !everReady(pod) && now.Sub(pod.CreationTimestamp.Time) >= limit {
		return fmt.Sprintf("transformer not ready within spec.initTimeout (%s)", limit)
	}
	return ""
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
