package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// TransformRun is an offline dataset-to-dataset transform: every object of a source in the
// namespace's data goes through a Transform (or a pipeline "a>>b") of the same namespace into a
// destination, on every chosen node at once, each node transforming the objects of its own data.
// Runs are durable: outputs appear under their final names only when complete, and a node whose
// agent restarts resumes from its journal.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=etlrun,categories=mlkube
// +kubebuilder:printcolumn:name="Transform",type=string,JSONPath=`.spec.transform`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Rate",type=string,JSONPath=`.status.rate`
// +kubebuilder:printcolumn:name="ETA",type=string,JSONPath=`.status.eta`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TransformRun struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says what to transform, where to, and how; only spec.suspend may change once the run
	// started.
	Spec TransformRunSpec `json:"spec,omitempty"`
	// status is what the run did so far, written by the controller.
	Status TransformRunStatus `json:"status,omitempty"`
}

// TransformRunList is a list of TransformRuns.
//
// +kubebuilder:object:root=true
type TransformRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the TransformRuns.
	Items []TransformRun `json:"items"`
}

// Bounds of a TransformRun's spec, enforced by the webhook and the CRD.
const (
	// MaxRunWorkersPerNode bounds spec.workersPerNode.
	MaxRunWorkersPerNode = 64
	// DefaultRunWorkersPerNode is spec.workersPerNode's default.
	DefaultRunWorkersPerNode = 4
	// MaxRunObjects bounds spec.source.objects and what a template expands to.
	MaxRunObjects = 100000
	// MaxRunTemplateBytes bounds the bytes of the names a template expands to, together: 8 MiB,
	// 100000 names of 83 bytes. The count alone would let a 1 KiB template name 100 MiB (100000
	// names of 1 KiB), which the webhook and every node would hold; a list of objects stays below
	// it anyway, bounded by the size of an object the API server stores.
	MaxRunTemplateBytes = 8 << 20
	// MaxRunErrors is how many recent per-object errors status keeps (the complete list is
	// the run's error manifest).
	MaxRunErrors = 128
	// MaxRunTTLSeconds bounds spec.ttlSecondsAfterFinished (30 days).
	MaxRunTTLSeconds = 30 * 24 * 3600
)

// TransformRunSpec says what to transform, where to, and how. Once the run started, only
// Suspend may change.
type TransformRunSpec struct {
	// transform names a Transform of the run's namespace, or a pipeline of up to 8 of them,
	// "a>>b". Unset, the run is a copy: each object goes to the destination as it is (what
	// `kubectl etl cp` between an object store and the node tier starts).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Transform string `json:"transform,omitempty"`
	// args reach the transformer with every object, at most 4 KiB.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Args string `json:"args,omitempty"`
	// source is what to transform, in the namespace's data on each node: exactly one of prefix,
	// objects and template.
	Source RunSource `json:"source"`
	// destination is where results go, in the namespace's data on each node.
	Destination RunDestination `json:"destination"`
	// workersPerNode is how many objects each node transforms at once, 1 to 64. Defaults to 4.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	WorkersPerNode *int32 `json:"workersPerNode,omitempty"`
	// nodeSelector chooses the nodes; by default every node whose agent and transformer are
	// ready.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// dryRun counts and lists what would be written, and writes nothing.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// check transforms every object and reads each result to its end, then discards it: no
	// result is written, so a check finds the objects a run would fail on without touching the
	// destination's objects. Its failures are listed as a run's are (status and the error
	// manifest under the destination). At most one of dryRun and check.
	// +optional
	Check bool `json:"check,omitempty"`
	// continueOnError goes on after a failed object; without it the first failure fails the run.
	// +optional
	ContinueOnError bool `json:"continueOnError,omitempty"`
	// overwrite replaces destination objects that exist; by default such an object fails.
	// +optional
	Overwrite bool `json:"overwrite,omitempty"`
	// suspend stops the workers after their current object; false again resumes the run where
	// it stopped. It is the only field that may change once the run started.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// ttlSecondsAfterFinished deletes the run this many seconds after it finished, at most 30
	// days (2592000); unset keeps it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2592000
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// RunSource is exactly one of a prefix, a list of objects or a template, in the namespace's data
// on the nodes or, with store, in an ObjectStore's bucket.
type RunSource struct {
	// store names an ObjectStore of the run's namespace to read the objects from: prefix,
	// objects and template then name keys of its bucket, and each node fetches its share of them
	// (the objects whose results the node tier places on it) straight from the store. Unset: the
	// namespace's data on the nodes.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Store string `json:"store,omitempty"`
	// prefix is a directory of the namespace's data whose objects, at any depth, are transformed;
	// with store, a key prefix of its bucket ("images/").
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Prefix string `json:"prefix,omitempty"`
	// objects names the objects to transform, at most 100000.
	// +optional
	// +kubebuilder:validation:MaxItems=100000
	// +kubebuilder:validation:items:MaxLength=1024
	Objects []string `json:"objects,omitempty"`
	// template names objects with brace ranges, "shard-{0000..0999}.tar" (zero padding is kept;
	// several ranges multiply), at most 100000 of them and 8 MiB of names together.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Template string `json:"template,omitempty"`
	// extension, when set, picks only objects ending in it; with destination.toExtension it is
	// changed in the result's name: ".flac" to ".wav".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Extension string `json:"extension,omitempty"`
}

// RunDestination is where results are written: the namespace's data on the nodes, or an
// ObjectStore's bucket.
type RunDestination struct {
	// store names an ObjectStore of the run's namespace to write the results to, each with one
	// PUT (a multipart upload past 16 MiB, visible only once complete), under prefix as a key
	// prefix. Unset: the namespace's data on each node.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Store string `json:"store,omitempty"`
	// prefix is a directory of the namespace's data, or with store a key prefix of its bucket;
	// each result goes to the object's name under it (for a prefix source, its name relative to
	// the source's prefix).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Prefix string `json:"prefix"`
	// toExtension replaces source.extension in the result's name.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ToExtension string `json:"toExtension,omitempty"`
}

// RunPhase is where a TransformRun, or one node's share of it, stands.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Suspended
type RunPhase string

const (
	RunPending   RunPhase = "Pending"
	RunRunning   RunPhase = "Running"
	RunSucceeded RunPhase = "Succeeded"
	RunFailed    RunPhase = "Failed"
	RunSuspended RunPhase = "Suspended"
)

// The conditions of a TransformRun: Complete, Failed or Suspended is True once the run is in that
// phase; pipelines waiting on a run, and kubectl etl, read them.
const (
	RunConditionComplete  = "Complete"
	RunConditionFailed    = "Failed"
	RunConditionSuspended = "Suspended"
)

// Reasons of a TransformRun's conditions and events.
const (
	RunReasonCompleted     = "Completed"
	RunReasonNodeFailed    = "NodeFailed"
	RunReasonObjectsFailed = "ObjectsFailed"
	RunReasonSuspended     = "Suspended"
	RunReasonResumed       = "Resumed"
)

// RunCounts counts objects and bytes of a run: Planned is what the run found to transform;
// Done, Failed and Skipped are what it did (Skipped: done by an earlier attempt, per the journal).
type RunCounts struct {
	// plannedObjects is the number of objects the run found to transform.
	PlannedObjects int64 `json:"plannedObjects,omitempty"`
	// plannedBytes is the total size of the objects the run found to transform.
	PlannedBytes int64 `json:"plannedBytes,omitempty"`
	// doneObjects is the number of objects transformed and written.
	DoneObjects int64 `json:"doneObjects,omitempty"`
	// doneBytes is the total size of the transformed objects, as read from the source.
	DoneBytes int64 `json:"doneBytes,omitempty"`
	// failedObjects is the number of objects whose transformation or write failed.
	FailedObjects int64 `json:"failedObjects,omitempty"`
	// skippedObjects is the number of objects an earlier attempt already did, per the journal.
	SkippedObjects int64 `json:"skippedObjects,omitempty"`
}

// RunNodeStatus is one node's share of a run.
type RunNodeStatus struct {
	// node is the node's name.
	Node string `json:"node"`
	// phase is the node's share's: Pending until its agent took the run, then Running,
	// Succeeded, Failed or Suspended.
	// +optional
	Phase RunPhase `json:"phase,omitempty"`
	// RunCounts are the node's counts.
	RunCounts `json:",inline"`
	// objectsPerSecond is the node's recent rate while its share runs, as the run's.
	// +optional
	ObjectsPerSecond int64 `json:"objectsPerSecond,omitempty"`
	// bytesPerSecond is the node's recent rate in source bytes while its share runs.
	// +optional
	BytesPerSecond int64 `json:"bytesPerSecond,omitempty"`
	// message says why the node's share failed.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// lastSeen is when the node's agent last answered about the run.
	// +optional
	LastSeen *metav1.Time `json:"lastSeen,omitempty"`
}

// TransformRunStatus is what the run did so far. The controller writes it at a bounded rate,
// never per object.
type TransformRunStatus struct {
	// phase is where the run stands: Pending, Running, Succeeded, Failed or Suspended.
	// +optional
	Phase RunPhase `json:"phase,omitempty"`
	// conditions are the run's conditions: Complete, Failed and Suspended, with reasons.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// totals sum the nodes' counts.
	// +optional
	Totals RunCounts `json:"totals,omitempty"`
	// nodes are the nodes' shares of the run.
	// +optional
	// +listType=map
	// +listMapKey=node
	// +kubebuilder:validation:MaxItems=5000
	Nodes []RunNodeStatus `json:"nodes,omitempty"`
	// progress is "done/planned" objects (done counting skipped ones), for kubectl get.
	// +optional
	Progress string `json:"progress,omitempty"`
	// objectsPerSecond is the recent rate in objects per second (over the whole run once it
	// finished).
	// +optional
	ObjectsPerSecond int64 `json:"objectsPerSecond,omitempty"`
	// bytesPerSecond is the recent rate in bytes per second (over the whole run once it
	// finished).
	// +optional
	BytesPerSecond int64 `json:"bytesPerSecond,omitempty"`
	// rate spells objectsPerSecond and bytesPerSecond for kubectl get, "120 obj/s, 3.4 MB/s".
	// +optional
	Rate string `json:"rate,omitempty"`
	// eta is the estimated time left at the recent rate, e.g. "3m20s".
	// +optional
	ETA string `json:"eta,omitempty"`
	// startTime is when the controller started the run.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// completionTime is when the run succeeded or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// errors are the most recent failed objects, at most 128; the complete list is the error
	// manifest in each node's destination.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	Errors []ObjectError `json:"errors,omitempty"`
	// errorManifest is the name, under the destination prefix, of the JSON lines file each node
	// writes with every failed object when its share ends.
	// +optional
	ErrorManifest string `json:"errorManifest,omitempty"`
	// observedGeneration is the metadata.generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}
