// Package mxjob is the MxJob controller: one pod and one headless Service per replica, wired by
// the DMLC environment contract, with the job's status, run policies and events computed from
// what the cluster holds.
package mxjob

import (
	"fmt"
	"strconv"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// replica identifies one replica of a job.
type replica struct {
	Type  v1beta1.ReplicaType
	Index int
}

// String names the replica the way users read it in messages: "worker-1".
func (r replica) String() string { return fmt.Sprintf("%s-%d", r.Type.Role(), r.Index) }

// replicaName is the name of a replica's pod and Service.
func replicaName(job string, r replica) string {
	return v1beta1.ReplicaName(job, r.Type, r.Index)
}

// replicaLabels are the labels of a replica's pod and Service; the Service selects on them.
func replicaLabels(job string, r replica) map[string]string {
	return map[string]string{
		labels.ManagedBy:          labels.ManagedByValue,
		v1beta1.LabelJobName:      job,
		v1beta1.LabelReplicaType:  r.Type.Role(),
		v1beta1.LabelReplicaIndex: strconv.Itoa(r.Index),
	}
}

// replicasOf lists every replica the job's spec asks for, schedulers first.
func replicasOf(job *v1beta1.MxJob) []replica {
	var out []replica
	for _, t := range v1beta1.ReplicaTypes {
		rs := job.Spec.ReplicaSpecFor(t)
		if rs == nil {
			continue
		}
		for i := range int(count(rs)) {
			out = append(out, replica{Type: t, Index: i})
		}
	}
	return out
}

// count is a replica spec's replicas, 0 for a type the job does not have.
func count(rs *v1beta1.ReplicaSpec) int32 {
	if rs == nil {
		return 0
	}
	return rs.ReplicaCount()
}

// port is a replica spec's psRootPort, defaulted.
func port(rs *v1beta1.ReplicaSpec) int32 {
	if rs == nil || rs.PsRootPort == nil {
		return v1beta1.DefaultPsRootPort
	}
	return *rs.PsRootPort
}
