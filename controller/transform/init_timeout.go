package transform

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// initTimeout is how long a transformer may take to become ready: spec.initTimeout, or its default.
func initTimeout(t *v1alpha1.Transform) time.Duration {
	if t.Spec.InitTimeout == nil {
		return v1alpha1.DefaultInitTimeout
	}
	return t.Spec.InitTimeout.Duration
}

// initTimedOut: a pod that has never been ready has failed once limit has passed since its
// creation. One that was ready once and is not now is failing its probe, which its containers'
// termination or phase will tell.
func initTimedOut(pod *corev1.Pod, limit time.Duration, now time.Time) bool {
	return !podReady(pod) && !everReady(pod) && now.Sub(pod.CreationTimestamp.Time) >= limit
}
