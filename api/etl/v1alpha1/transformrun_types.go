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

	Spec   TransformRunSpec   `json:"spec,omitempty"`
	Status TransformRunStatus `json:"status,omitempty"`
}

// TransformRunList is a list of TransformRuns.
//
// +kubebuilder:object:root=true
type TransformRunList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TransformRun `json:"items"`
}

// Bounds of a TransformRun's spec, enforced by the webhook and the CRD.
const (
	// MaxRunWorkersPerNode bounds spec.workersPerNode.
	MaxRunWorkersPerNode = 64
	// DefaultRunWorkersPerNode is spec.workersPerNode's default.
	DefaultRunWorkersPerNode = 4
	// MaxRunObjects bounds spec.source.objects and what a template expands to.
	MaxRunObjects = 100000
	// MaxRunErrors is how many recent per-object errors status keeps (the complete list is
	// the run's error manifest).
	MaxRunErrors = 128
	// MaxRunTTLSeconds bounds spec.ttlSecondsAfterFinished (30 days).
	MaxRunTTLSeconds = 30 * 24 * 3600
)

// TransformRunSpec says what to transform, where to, and how. Once the run started, only
// Suspend may change.
type TransformRunSpec struct {
	// Transform names a Transform of the run's namespace, or a pipeline of them, "a>>b".
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Transform string `json:"transform"`
	// Args reach the transformer with every object.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Args string `json:"args,omitempty"`
	// Source is what to transform, in the namespace's data on each node.
	Source RunSource `json:"source"`
	// Destination is where results go, in the namespace's data on each node.
	Destination RunDestination `json:"destination"`
	// WorkersPerNode is how many objects each node transforms at once (default 4).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	WorkersPerNode *int32 `json:"workersPerNode,omitempty"`
	// NodeSelector chooses the nodes; by default every node whose agent and transformer are
	// ready.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// DryRun counts and lists what would be written, and writes nothing.
	// +optional
	DryRun bool `json:"dryRun,omitempty"`
	// ContinueOnError goes on after a failed object; without it the first failure fails the run.
	// +optional
	ContinueOnError bool `json:"continueOnError,omitempty"`
	// Overwrite replaces destination objects that exist; by default such an object fails.
	// +optional
	Overwrite bool `json:"overwrite,omitempty"`
	// Suspend stops the workers after their current object; false again resumes the run where
	// it stopped. The only field that may change once the run started.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// TTLSecondsAfterFinished deletes the run that long after it finished.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=2592000
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// RunSource is exactly one of a prefix, a list of objects or a template.
type RunSource struct {
	// Prefix is a directory of the namespace's data whose objects, at any depth, are transformed.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Prefix string `json:"prefix,omitempty"`
	// Objects names the objects to transform.
	// +optional
	// +kubebuilder:validation:MaxItems=100000
	// +kubebuilder:validation:items:MaxLength=1024
	Objects []string `json:"objects,omitempty"`
	// Template names objects with brace ranges, "shard-{0000..0999}.tar" (zero padding is kept;
	// several ranges multiply).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Template string `json:"template,omitempty"`
	// Extension, when set, picks only objects ending in it; with the destination's
	// ToExtension it is changed in the result's name: ".flac" to ".wav".
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Extension string `json:"extension,omitempty"`
}

// RunDestination is where results are written.
type RunDestination struct {
	// Prefix is a directory of the namespace's data; each result goes to the object's name
	// under it (for a prefix source, its name relative to the source's prefix).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Prefix string `json:"prefix"`
	// ToExtension replaces the source's Extension in the result's name.
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

// RunCounts counts objects and bytes of a run: Planned is what the run found to transform;
// Done, Failed and Skipped are what it did (Skipped: done by an earlier attempt, per the journal).
type RunCounts struct {
	PlannedObjects int64 `json:"plannedObjects,omitempty"`
	PlannedBytes   int64 `json:"plannedBytes,omitempty"`
	DoneObjects    int64 `json:"doneObjects,omitempty"`
	DoneBytes      int64 `json:"doneBytes,omitempty"`
	FailedObjects  int64 `json:"failedObjects,omitempty"`
	SkippedObjects int64 `json:"skippedObjects,omitempty"`
}

// RunNodeStatus is one node's share of a run.
type RunNodeStatus struct {
	Node string `json:"node"`
	// Phase is the node's: Pending until its agent took the run, then Running, Succeeded,
	// Failed or Suspended.
	// +optional
	Phase     RunPhase `json:"phase,omitempty"`
	RunCounts `json:",inline"`
	// Message says why the node failed.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
	// LastSeen is when its agent last answered about the run.
	// +optional
	LastSeen *metav1.Time `json:"lastSeen,omitempty"`
}

// TransformRunStatus is what the run did so far. The controller writes it at a bounded rate,
// never per object.
type TransformRunStatus struct {
	// +optional
	Phase RunPhase `json:"phase,omitempty"`
	// Conditions: Complete, Failed, Suspended, with reasons.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Totals sum the nodes' counts.
	// +optional
	Totals RunCounts `json:"totals,omitempty"`
	// Nodes are the nodes' shares.
	// +optional
	// +listType=map
	// +listMapKey=node
	// +kubebuilder:validation:MaxItems=5000
	Nodes []RunNodeStatus `json:"nodes,omitempty"`
	// Progress is "done/planned" objects, for kubectl get.
	// +optional
	Progress string `json:"progress,omitempty"`
	// ObjectsPerSecond and BytesPerSecond are the recent rate; Rate spells them for kubectl get.
	// +optional
	ObjectsPerSecond int64 `json:"objectsPerSecond,omitempty"`
	// +optional
	BytesPerSecond int64 `json:"bytesPerSecond,omitempty"`
	// +optional
	Rate string `json:"rate,omitempty"`
	// ETA is the estimated time left at the recent rate, e.g. "3m20s".
	// +optional
	ETA string `json:"eta,omitempty"`
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Errors are the most recent failed objects, at most MaxRunErrors; the complete list is the
	// error manifest in each node's destination.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	Errors []ObjectError `json:"errors,omitempty"`
	// ErrorManifest is the name, under the destination prefix, of the JSON lines file each node
	// writes with every failed object when its share ends.
	// +optional
	ErrorManifest string `json:"errorManifest,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}
