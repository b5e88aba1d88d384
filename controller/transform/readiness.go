package transform

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// everReady: a pod that was ready once and is not now is failing its probe, which its containers'
// termination or phase will tell; the init timeout is for pods that never came up.
func everReady(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Started != nil && *cs.Started && cs.Ready {
			return true
		}
	}
	return false
}

func initTimeout(t *v1alpha1.Transform) time.Duration {
	if t.Spec.InitTimeout == nil {
		return v1alpha1.DefaultInitTimeout
	}
	return t.Spec.InitTimeout.Duration
}
