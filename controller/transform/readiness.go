package transform

import (
	corev1 "k8s.io/api/core/v1"
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
