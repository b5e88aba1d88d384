// Package mxjob is the MxJob controller: one pod and one headless Service per replica, wired by
// the DMLC environment contract, with the job's status, run policies and events computed from
// what the cluster holds.
package mxjob

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/labels"
)

// Labels every replica pod and Service carries.
const (
	LabelJobName      = "mxnet.mlkube.io/job-name"
	LabelReplicaType  = "mxnet.mlkube.io/replica-type"
	LabelReplicaIndex = "mxnet.mlkube.io/replica-index"
)

// replica identifies one replica of a job.
type replica struct {
	Type  v1beta1.ReplicaType
	Index int
}

// role is the lowercase replica type, as DMLC_ROLE and names spell it.
func (r replica) role() string { return strings.ToLower(string(r.Type)) }

// String names the replica the way users read it in messages: "worker-1".
func (r replica) String() string { return fmt.Sprintf("%s-%d", r.role(), r.Index) }

// replicaName is the name of a replica's pod and Service: <job>-<type>-<index>.
func replicaName(job string, r replica) string {
	return job + "-" + r.role() + "-" + strconv.Itoa(r.Index)
}

// replicaLabels are the labels of a replica's pod and Service; the Service selects on them.
func replicaLabels(job string, r replica) map[string]string {
	return map[string]string{
		labels.ManagedBy:  labels.ManagedByValue,
		LabelJobName:      job,
		LabelReplicaType:  r.role(),
		LabelReplicaIndex: strconv.Itoa(r.Index),
	}
}

// replicasOf lists every replica the job's spec asks for, schedulers first.
func replicasOf(job *v1beta1.MxJob) []replica {
	var out []replica
	for _, t := range v1beta1.ReplicaTypes {
		rs := replicaSpec(job, t)
		if rs == nil {
			continue
		}
		for i := range int(count(rs)) {
			out = append(out, replica{Type: t, Index: i})
		}
	}
	return out
}

// replicaSpec returns the job's spec for type t, or nil.
func replicaSpec(job *v1beta1.MxJob, t v1beta1.ReplicaType) *v1beta1.ReplicaSpec {
	for i := range job.Spec.ReplicaSpecs {
		if job.Spec.ReplicaSpecs[i].MxReplicaType == t {
			return &job.Spec.ReplicaSpecs[i]
		}
	}
	return nil
}

// count is a replica spec's replicas; the webhook defaults it, so nil means one.
func count(rs *v1beta1.ReplicaSpec) int32 {
	if rs == nil {
		return 0
	}
	if rs.Replicas == nil {
		return v1beta1.DefaultReplicas
	}
	return *rs.Replicas
}

// port is a replica spec's psRootPort, defaulted.
func port(rs *v1beta1.ReplicaSpec) int32 {
	if rs == nil || rs.PsRootPort == nil {
		return v1beta1.DefaultPsRootPort
	}
	return *rs.PsRootPort
}
