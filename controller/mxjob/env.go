package mxjob

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/mxnet/mxconfig"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// dmlcEnv is the environment every container of replica r gets: what ps-lite and MXNet read to
// find the scheduler and size the topology. cluster is mxCluster(job), rendered once for all
// of the job's replicas.
func dmlcEnv(job *v1beta1.MxJob, cluster mxconfig.EncodedCluster, r replica) []corev1.EnvVar {
	scheduler := job.Spec.ReplicaSpecFor(v1beta1.ReplicaTypeScheduler)
	rootURI, rootPort := "", "0"
	if job.Spec.JobMode == v1beta1.DistMode && scheduler != nil {
		rootURI = replicaName(job.Name, replica{Type: v1beta1.ReplicaTypeScheduler})
		rootPort = strconv.Itoa(int(port(scheduler)))
	}
	env := []corev1.EnvVar{
		{Name: mxconfig.EnvRole, Value: r.Type.Role()},
		{Name: mxconfig.EnvRootURI, Value: rootURI},
		{Name: mxconfig.EnvRootPort, Value: rootPort},
		{Name: mxconfig.EnvNumServer, Value: strconv.Itoa(int(count(job.Spec.ReplicaSpecFor(v1beta1.ReplicaTypeServer))))},
		{Name: mxconfig.EnvNumWorker, Value: strconv.Itoa(int(count(job.Spec.ReplicaSpecFor(v1beta1.ReplicaTypeWorker))))},
		{Name: mxconfig.EnvUseKubernetes, Value: "1"},
	}
	if r.Type == v1beta1.ReplicaTypeWorker {
		env = append(env, corev1.EnvVar{Name: mxconfig.EnvWorkerID, Value: strconv.Itoa(r.Index)})
	}
	task := mxconfig.Task{Type: r.Type.Role(), Index: r.Index}
	return append(env, corev1.EnvVar{Name: mxconfig.EnvName, Value: cluster.For(task)})
}

// mxCluster is the cluster part of every replica's MX_CONFIG. Every replica is named by its
// Service, which resolves to its pod.
func mxCluster(job *v1beta1.MxJob) mxconfig.Cluster {
	endpoints := func(t v1beta1.ReplicaType) []mxconfig.Endpoint {
		rs := job.Spec.ReplicaSpecFor(t)
		out := []mxconfig.Endpoint{}
		for i := range int(count(rs)) {
			out = append(out, mxconfig.Endpoint{URL: replicaName(job.Name, replica{Type: t, Index: i}), Port: port(rs)})
		}
		return out
	}
	return mxconfig.Cluster{
		Scheduler: endpoints(v1beta1.ReplicaTypeScheduler),
		Server:    endpoints(v1beta1.ReplicaTypeServer),
		Worker:    endpoints(v1beta1.ReplicaTypeWorker),
	}
}
