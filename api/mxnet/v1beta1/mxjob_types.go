package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// JobMode says whether a job trains on one worker or on a parameter-server topology.
// +kubebuilder:validation:Enum=local;dist
type JobMode string

const (
	// LocalMode runs a single WORKER with no scheduler or servers.
	LocalMode JobMode = "local"
	// DistMode runs a SCHEDULER, SERVERs and WORKERs.
	DistMode JobMode = "dist"
)

// ReplicaType is the role a replica plays in the parameter-server topology.
// +kubebuilder:validation:Enum=SCHEDULER;SERVER;WORKER
type ReplicaType string

const (
	ReplicaTypeScheduler ReplicaType = "SCHEDULER"
	ReplicaTypeServer    ReplicaType = "SERVER"
	ReplicaTypeWorker    ReplicaType = "WORKER"
)

// ReplicaTypes lists every replica type in the order the controller starts them.
var ReplicaTypes = []ReplicaType{ReplicaTypeScheduler, ReplicaTypeServer, ReplicaTypeWorker}

// RestartPolicy says what happens when a replica's container exits.
// +kubebuilder:validation:Enum=Never;OnFailure;Always;ExitCode
type RestartPolicy string

const (
	RestartPolicyNever     RestartPolicy = "Never"
	RestartPolicyOnFailure RestartPolicy = "OnFailure"
	RestartPolicyAlways    RestartPolicy = "Always"
	// RestartPolicyExitCode treats exit codes 1-127 as permanent failures and retries
	// exit codes >= 128 (signals, OOM kills) by recreating the pod.
	RestartPolicyExitCode RestartPolicy = "ExitCode"
)

// CleanPodPolicy says which pods are deleted when a job finishes.
// +kubebuilder:validation:Enum=None;Running;All
type CleanPodPolicy string

const (
	CleanPodPolicyNone    CleanPodPolicy = "None"
	CleanPodPolicyRunning CleanPodPolicy = "Running"
	CleanPodPolicyAll     CleanPodPolicy = "All"
)

// SuccessPolicy says when a dist job has succeeded.
// Validated by the admission webhook: "" or AllWorkers.
type SuccessPolicy string

const (
	// SuccessPolicyDefault: the scheduler's success ends a dist job.
	SuccessPolicyDefault SuccessPolicy = ""
	// SuccessPolicyAllWorkers: a dist job succeeds when every worker has succeeded.
	SuccessPolicyAllWorkers SuccessPolicy = "AllWorkers"
)

// Defaults the admission webhook fills in.
const (
	DefaultPsRootPort     int32 = 9091
	DefaultReplicas       int32 = 1
	DefaultContainerName        = "mxnet"
	DefaultPortName             = "mxjob-port"
	DefaultRestartPolicy        = RestartPolicyNever
	DefaultCleanPodPolicy       = CleanPodPolicyRunning
)

// Upper bounds the admission webhook and the CRD enforce, so that no single MxJob can make the
// manager materialise an unbounded number of pods or keep retrying or running forever. The CRD's
// +kubebuilder:validation:Maximum markers repeat these numbers; a test keeps them equal.
const (
	// MaxReplicas bounds the replicas of one replica spec.
	MaxReplicas int32 = 1000
	// MaxBackoffLimit bounds runPolicy.backoffLimit.
	MaxBackoffLimit int32 = 1000
	// MaxSeconds bounds runPolicy.activeDeadlineSeconds and ttlSecondsAfterFinished: one year.
	MaxSeconds int64 = 365 * 24 * 3600
)

// ReplicaSpec describes one type of replica.
type ReplicaSpec struct {
	// mxReplicaType is the role these replicas play: SCHEDULER, SERVER or WORKER. Each type
	// appears at most once in a job. Defaults to WORKER.
	// +optional
	MxReplicaType ReplicaType `json:"mxReplicaType,omitempty"`

	// replicas is the number of pods of this type, 1 to 1000; a SCHEDULER has exactly 1.
	// Defaults to 1.
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// psRootPort is the port these replicas listen on and their Services expose; the SCHEDULER's
	// is DMLC_PS_ROOT_PORT, where every replica reaches the scheduler. Defaults to the port named
	// mxjob-port of the template's mxnet container when it declares one, else 9091; when both are
	// set they must be equal. An mxnet container that declares no mxjob-port is given one on
	// psRootPort.
	// +optional
	PsRootPort *int32 `json:"psRootPort,omitempty"`

	// restartPolicy says what a failed pod of this type does. Never: the job fails. OnFailure
	// and Always: the pod's own restart policy, and a pod that failed as a whole (evicted, node
	// lost) is recreated. ExitCode: exit codes 1-127 fail the job, 128 and above (signals, OOM
	// kills) recreate the pod. It replaces the template's restartPolicy. Defaults to Never.
	// +optional
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`

	// template is the pod template of every replica of this type. It must hold a container named
	// mxnet; every container is given the DMLC_* and MX_CONFIG environment that wires the replicas
	// together.
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
}

// RunPolicy holds the policies that govern a job's lifetime.
type RunPolicy struct {
	// cleanPodPolicy says which pods are deleted when the job finishes: None, Running (those still
	// running) or All. Defaults to Running.
	// +optional
	CleanPodPolicy CleanPodPolicy `json:"cleanPodPolicy,omitempty"`

	// backoffLimit is the number of restarts allowed before the job fails, counting recreated pods
	// and in-place container restarts, at most 1000; unset means no limit.
	// +kubebuilder:validation:Maximum=1000
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// activeDeadlineSeconds fails the job once it has run longer than this many seconds, counted
	// from its start (or its last resume), at most a year (31536000); unset means no deadline.
	// +kubebuilder:validation:Maximum=31536000
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// ttlSecondsAfterFinished deletes the job this many seconds after it succeeded or failed, at
	// most a year (31536000); unset keeps it.
	// +kubebuilder:validation:Maximum=31536000
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// suspend deletes the job's running pods while true and recreates them when set back to
	// false. It is the one spec field that may change at any time once the job exists. Defaults
	// to false, and to true for a job labelled kueue.x-k8s.io/queue-name where Kueue is
	// installed: Kueue unsuspends it when it admits it.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
}

// MxJobSpec is the desired state of an MxJob.
type MxJobSpec struct {
	// jobMode is local (a single WORKER, no scheduler or servers) or dist (a SCHEDULER, SERVERs
	// and WORKERs, all three required). Defaults to dist when the job has a SCHEDULER or a
	// SERVER, else local.
	// +optional
	JobMode JobMode `json:"jobMode,omitempty"`

	// replicaSpecs lists the job's replica types, each type at most once: a local job has one
	// WORKER, a dist job a SCHEDULER, SERVERs and WORKERs.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	ReplicaSpecs []ReplicaSpec `json:"replicaSpecs"`

	// runPolicy governs the job's lifetime: restarts, deadlines, clean-up and suspension.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`

	// successPolicy says when a dist job has succeeded: "" (the default) once the scheduler has,
	// or AllWorkers once every worker has.
	// +optional
	SuccessPolicy SuccessPolicy `json:"successPolicy,omitempty"`

	// dataset names the objects of the job's namespace its workers read through their own
	// node's data path agent. With it, every WORKER pod gets a data path token, the environment a
	// client reads to find its agent and the dataset (api/wire/podenv.go), and workers spread over
	// the nodes whose agent is ready. Unset: the pods know nothing of the data path.
	// +optional
	Dataset *Dataset `json:"dataset,omitempty"`
}

// Dataset is what a job's workers read: the objects under a prefix or named by a template, each
// optionally through a Transform, as a TransformRun's source names them. Exactly one of prefix
// and template is set.
type Dataset struct {
	// prefix is a directory of the namespace's data whose objects, at any depth, make the dataset,
	// e.g. train; the webhook drops trailing slashes, so train/ is stored as train.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Prefix string `json:"prefix,omitempty"`
	// template names the objects with brace ranges, "shard-{0000..0999}.tar" (zero padding is
	// kept; several ranges multiply), at most 100000 of them.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Template string `json:"template,omitempty"`
	// transform, when set, names a Transform of the job's namespace, or a pipeline of up to 8 of
	// them, "a>>b", that every object goes through on its node before the worker reads it.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Transform string `json:"transform,omitempty"`
	// args reach the transformer with every object, at most 4 KiB; only with transform.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Args string `json:"args,omitempty"`
}

// Phase is the coarse life-cycle phase of an MxJob, as the original MxJob spec named it.
type Phase string

const (
	PhaseCreating Phase = "Creating"
	PhaseRunning  Phase = "Running"
	PhaseCleanUp  Phase = "CleanUp"
	PhaseFailed   Phase = "Failed"
	PhaseDone     Phase = "Done"
)

// State is the outcome of an MxJob.
type State string

const (
	StateRunning   State = "Running"
	StateSucceeded State = "Succeeded"
	StateFailed    State = "Failed"
	// StateSuspended: runPolicy.suspend is true and the job's pods are deleted.
	StateSuspended State = "Suspended"
)

// Condition types of an MxJob.
const (
	ConditionCreated    = "Created"
	ConditionRunning    = "Running"
	ConditionRestarting = "Restarting"
	ConditionSuspended  = "Suspended"
	ConditionSucceeded  = "Succeeded"
	ConditionFailed     = "Failed"
	// ConditionAdmitted is set only on a job queued by Kueue: True while Kueue admits it, False
	// with the reason it waits (Pending) or was stopped (Preempted, Evicted, ...).
	ConditionAdmitted = "Admitted"
)

// ReplicaStatus counts the pods of one replica type.
type ReplicaStatus struct {
	// active is the number of pods of this type that are pending or running.
	Active int32 `json:"active,omitempty"`
	// succeeded is the number of pods of this type that exited successfully.
	Succeeded int32 `json:"succeeded,omitempty"`
	// failed is the number of pods of this type that failed.
	Failed int32 `json:"failed,omitempty"`
}

// MxJobStatus is the observed state of an MxJob.
type MxJobStatus struct {
	// phase is the job's coarse life-cycle phase, as the original MxJob API named it: Creating,
	// Running, CleanUp, Failed or Done.
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// state is the job's outcome: Running, Succeeded, Failed or Suspended.
	// +optional
	State State `json:"state,omitempty"`
	// reason says why the job is in its state, naming the replica that decided it.
	// +optional
	Reason string `json:"reason,omitempty"`
	// conditions are the job's conditions, at most one of each type: Created, Running,
	// Restarting, Suspended, Succeeded and Failed, and Admitted for a job queued by Kueue.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// replicaStatuses counts the pods of each replica type, keyed by SCHEDULER, SERVER and
	// WORKER.
	// +optional
	ReplicaStatuses map[ReplicaType]*ReplicaStatus `json:"replicaStatuses,omitempty"`
	// restarts counts the failed pods the controller recreated; runPolicy.backoffLimit is
	// compared with it plus the in-place container restarts of the current pods.
	// +optional
	Restarts int32 `json:"restarts,omitempty"`
	// restartingPods lists the UIDs of failed pods already counted in restarts and awaiting
	// recreation, so that a failed pod is counted once even when its deletion must be retried.
	// +optional
	RestartingPods []string `json:"restartingPods,omitempty"`
	// startTime is when the controller started the job, or last resumed it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the job succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// observedGeneration is the metadata.generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// MxJob is an MXNet training job: in dist mode a SCHEDULER, SERVERs and WORKERs wired by the
// DMLC environment into a parameter-server topology, in local mode a single WORKER.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mxj,categories=mlkube
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.jobMode`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Workers",type=integer,JSONPath=`.spec.replicaSpecs[?(@.mxReplicaType=="WORKER")].replicas`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type MxJob struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the job's desired state; only spec.runPolicy.suspend may change once the job
	// exists, and while the job is suspended its templates' labels, annotations, nodeSelector,
	// affinity, tolerations and schedulingGates (which Kueue sets when it admits the job).
	Spec MxJobSpec `json:"spec,omitempty"`
	// status is the job's observed state, written by the controller.
	Status MxJobStatus `json:"status,omitempty"`
}

// MxJobList is a list of MxJobs.
//
// +kubebuilder:object:root=true
type MxJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the MxJobs.
	Items []MxJob `json:"items"`
}
