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
	// MxReplicaType is SCHEDULER, SERVER or WORKER. Defaults to WORKER.
	// +optional
	MxReplicaType ReplicaType `json:"mxReplicaType,omitempty"`

	// Replicas is the number of pods of this type. Defaults to 1.
	// +kubebuilder:validation:Maximum=1000
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// PsRootPort is the port the scheduler listens on. Defaults to 9091.
	// +optional
	PsRootPort *int32 `json:"psRootPort,omitempty"`

	// RestartPolicy applies to the pods of this replica type. Defaults to Never.
	// +optional
	RestartPolicy RestartPolicy `json:"restartPolicy,omitempty"`

	// Template is the pod template of every replica of this type; it must hold a container
	// named "mxnet".
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
}

// RunPolicy holds the policies that govern a job's lifetime.
type RunPolicy struct {
	// CleanPodPolicy says which pods to delete when the job finishes. Defaults to Running.
	// +optional
	CleanPodPolicy CleanPodPolicy `json:"cleanPodPolicy,omitempty"`

	// BackoffLimit is the number of pod restarts allowed before the job fails; unset means no limit.
	// +kubebuilder:validation:Maximum=1000
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`

	// ActiveDeadlineSeconds fails the job once it has run longer than this.
	// +kubebuilder:validation:Maximum=31536000
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// TTLSecondsAfterFinished deletes the job this long after it finished.
	// +kubebuilder:validation:Maximum=31536000
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`

	// Suspend deletes the job's running pods while true and recreates them when set back to false.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
}

// MxJobSpec is the desired state of an MxJob.
type MxJobSpec struct {
	// JobMode is local or dist; inferred from the replica types when empty.
	// +optional
	JobMode JobMode `json:"jobMode,omitempty"`

	// ReplicaSpecs lists the replica types of the job, each type at most once.
	// +kubebuilder:validation:MinItems=1
	ReplicaSpecs []ReplicaSpec `json:"replicaSpecs"`

	// RunPolicy governs the job's lifetime.
	// +optional
	RunPolicy RunPolicy `json:"runPolicy,omitempty"`

	// SuccessPolicy is "" (the scheduler's success ends a dist job) or AllWorkers.
	// +optional
	SuccessPolicy SuccessPolicy `json:"successPolicy,omitempty"`
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
	StateUnknown   State = "Unknown"
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
)

// ReplicaStatus counts the pods of one replica type.
type ReplicaStatus struct {
	Active    int32 `json:"active,omitempty"`
	Succeeded int32 `json:"succeeded,omitempty"`
	Failed    int32 `json:"failed,omitempty"`
}

// MxJobStatus is the observed state of an MxJob.
type MxJobStatus struct {
	// +optional
	Phase Phase `json:"phase,omitempty"`
	// +optional
	State State `json:"state,omitempty"`
	// Reason says why the job is in its state, naming the replica that decided it.
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ReplicaStatuses counts pods per replica type.
	// +optional
	ReplicaStatuses map[ReplicaType]*ReplicaStatus `json:"replicaStatuses,omitempty"`
	// Restarts counts failed pods the controller recreated; runPolicy.backoffLimit is compared
	// with it plus the in-place container restarts of the current pods.
	// +optional
	Restarts int32 `json:"restarts,omitempty"`
	// RestartingPods lists the UIDs of failed pods already counted in Restarts and awaiting
	// recreation, so a failed pod is counted once even when its deletion must be retried.
	// +optional
	RestartingPods []string `json:"restartingPods,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// ObservedGeneration is the generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// MxJob is a distributed MXNet training job.
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

	Spec   MxJobSpec   `json:"spec,omitempty"`
	Status MxJobStatus `json:"status,omitempty"`
}

// MxJobList is a list of MxJobs.
//
// +kubebuilder:object:root=true
type MxJobList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MxJob `json:"items"`
}
