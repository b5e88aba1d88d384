package mxjob

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// cleanUp applies cleanPodPolicy to a finished job.
func cleanUp(job *v1beta1.MxJob, pods []corev1.Pod, services []corev1.Service, p *plan) {
	st := &p.status
	policy := job.Spec.RunPolicy.CleanPodPolicy
	for i := range pods {
		pod := &pods[i]
		active := pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
		if pod.DeletionTimestamp == nil && (policy == v1beta1.CleanPodPolicyAll || (policy != v1beta1.CleanPodPolicyNone && active)) {
			p.deletePods = append(p.deletePods, pod)
			p.deleteServices = append(p.deleteServices, pod.Name)
		}
	}
	if policy == v1beta1.CleanPodPolicyAll {
		// Services of replicas whose pods are already gone go too.
		for _, s := range services {
			if !slices.Contains(p.deleteServices, s.Name) {
				p.deleteServices = append(p.deleteServices, s.Name)
			}
		}
	}
	st.Phase = v1beta1.PhaseDone
	if st.State == v1beta1.StateFailed {
		st.Phase = v1beta1.PhaseFailed
	}
	if len(p.deletePods) > 0 {
		st.Phase = v1beta1.PhaseCleanUp
	}
	for _, c := range st.ReplicaStatuses {
		c.Active = 0 // what is left running is being deleted, or kept by cleanPodPolicy None
	}
	if policy == v1beta1.CleanPodPolicyNone {
		for _, pod := range pods {
			if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
				if c := st.ReplicaStatuses[v1beta1.ReplicaType(strings.ToUpper(pod.Labels[v1beta1.LabelReplicaType]))]; c != nil {
					c.Active++
				}
			}
		}
	}
}
