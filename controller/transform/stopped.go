package transform

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// stop applies spec.stopped: every transformer pod goes and the Transform is Stopped, whatever
// its stage was, until the flag is cleared (kubectl etl start).
func stop(t *v1alpha1.Transform, pods []corev1.Pod, p *plan, now time.Time) {
	p.deleteEveryPod(pods)
	p.status.ObservedGeneration = t.Generation
	setStage(&p.status, v1alpha1.StageStopped, v1alpha1.ReasonStopped, "spec.stopped is true; the transformer pods are deleted", now)
}
