package v1beta1

import (
	"strconv"
	"strings"
)

// Labels every replica pod and Service carries. The controller sets them and its Services select
// on them; the plugin and the tests find a job's pods by them.
const (
	LabelJobName      = "mxnet.mlkube.io/job-name"
	LabelReplicaType  = "mxnet.mlkube.io/replica-type"
	LabelReplicaIndex = "mxnet.mlkube.io/replica-index"
)

// DatasetTokenVolume is the projected volume of the data path token the controller adds to the
// worker pods of a job with spec.dataset, mounted read-only at wire.TokenDir in every container;
// the webhook refuses a worker template that uses the name or the path itself.
const DatasetTokenVolume = "mlkube-datapath-token"

// Reasons of an MxJob's conditions and events.
const (
	ReasonCreated              = "MxJobCreated"
	ReasonResumed              = "Resumed"
	ReasonSuspended            = "Suspended"
	ReasonAllReplicasRunning   = "AllReplicasRunning"
	ReasonReplicaRestarting    = "ReplicaRestarting"
	ReasonReplicaFailed        = "ReplicaFailed"
	ReasonBackoffLimitExceeded = "BackoffLimitExceeded"
	ReasonDeadlineExceeded     = "DeadlineExceeded"
	ReasonSucceeded            = "Succeeded"
	// ReasonNoDatapathAgent: the workers of a job with spec.dataset wait for a node whose data
	// path agent is ready.
	ReasonNoDatapathAgent = "NoDatapathAgent"
	// ReasonAdmitted and ReasonPending explain the Admitted condition of a job queued by Kueue;
	// a job Kueue evicted carries the eviction's own reason (Preempted, Deactivated, ...).
	ReasonAdmitted = "Admitted"
	ReasonPending  = "Pending"
)

// Suspended reports whether runPolicy.suspend is set.
func (rp *RunPolicy) Suspended() bool { return rp.Suspend != nil && *rp.Suspend }

// Role is the replica type in lower case, as DMLC_ROLE, the replica-type label and replica names
// spell it.
func (t ReplicaType) Role() string { return strings.ToLower(string(t)) }

// ReplicaName is the name of a replica's pod and Service: <job>-<role>-<index>. The controller
// names them so and the webhook bounds job names so that every such name is a DNS label.
func ReplicaName(job string, t ReplicaType, index int) string {
	return job + "-" + t.Role() + "-" + strconv.Itoa(index)
}

// InferMode is the jobMode of a job that sets none: dist when it has a SCHEDULER or a SERVER,
// else local. A replica spec without a type is a WORKER.
func InferMode(specs []ReplicaSpec) JobMode {
	for _, rs := range specs {
		if rs.MxReplicaType == ReplicaTypeScheduler || rs.MxReplicaType == ReplicaTypeServer {
			return DistMode
		}
	}
	return LocalMode
}

// ReplicaSpecFor returns the spec's replica spec of type t, or nil.
func (s *MxJobSpec) ReplicaSpecFor(t ReplicaType) *ReplicaSpec {
	for i := range s.ReplicaSpecs {
		if s.ReplicaSpecs[i].MxReplicaType == t {
			return &s.ReplicaSpecs[i]
		}
	}
	return nil
}

// ReplicaCount is the number of replicas rs asks for; the webhook defaults an unset count to
// DefaultReplicas.
func (rs *ReplicaSpec) ReplicaCount() int32 {
	if rs.Replicas == nil {
		return DefaultReplicas
	}
	return *rs.Replicas
}
