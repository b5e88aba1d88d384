package mxjob

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mlkube/mlkube/api/mxnet/mxconfig"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// podRestartPolicy maps a replica's restart policy onto the pod's: the kubelet restarts
// containers in place for OnFailure and Always; Never and ExitCode leave the pod failed, and
// under ExitCode the controller decides whether to recreate it.
func podRestartPolicy(p v1beta1.RestartPolicy) corev1.RestartPolicy {
	switch p {
	case v1beta1.RestartPolicyOnFailure:
		return corev1.RestartPolicyOnFailure
	case v1beta1.RestartPolicyAlways:
		return corev1.RestartPolicyAlways
	default:
		return corev1.RestartPolicyNever
	}
}

// buildReplicaPod makes replica r's pod from its template: labels, owner reference, restart
// policy and the DMLC environment appended to every container. cluster is
// mxCluster(job).Encode(), which the pods of one job share.
func buildReplicaPod(job *v1beta1.MxJob, cluster mxconfig.EncodedCluster, r replica) *corev1.Pod {
	rs := job.Spec.ReplicaSpecFor(r.Type)
	tmpl := rs.Template.DeepCopy()
	labels := maps.Clone(tmpl.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, replicaLabels(job.Name, r))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            replicaName(job.Name, r),
			Namespace:       job.Namespace,
			Labels:          labels,
			Annotations:     tmpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{ownerRef(job)},
		},
		Spec: tmpl.Spec,
	}
	pod.Spec.RestartPolicy = podRestartPolicy(rs.RestartPolicy)
	env := dmlcEnv(job, cluster, r)
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env...)
	}
	return pod
}

// buildReplicaService makes replica r's headless Service, which gives the replica a stable DNS
// name (<job>-<type>-<index>) resolving to its pod.
func buildReplicaService(job *v1beta1.MxJob, r replica) *corev1.Service {
	p := port(job.Spec.ReplicaSpecFor(r.Type))
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:            replicaName(job.Name, r),
			Namespace:       job.Namespace,
			Labels:          replicaLabels(job.Name, r),
			OwnerReferences: []metav1.OwnerReference{ownerRef(job)},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  replicaLabels(job.Name, r),
			Ports: []corev1.ServicePort{{
				Name: v1beta1.DefaultPortName, Port: p, TargetPort: intstr.FromInt32(p), Protocol: corev1.ProtocolTCP,
			}},
			// Peers dial the scheduler as soon as it has an IP, before any readiness.
			PublishNotReadyAddresses: true,
		},
	}
}

func ownerRef(job *v1beta1.MxJob) metav1.OwnerReference {
	return *metav1.NewControllerRef(job, v1beta1.GroupVersion.WithKind("MxJob"))
}
