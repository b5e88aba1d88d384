package v1alpha1

import (
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Communication is how the node agent hands objects to the transformer.
// The admission webhook also accepts the "hpush://" spelling and normalises it.
// +kubebuilder:validation:Enum=hpush;hpull;io;ws
type Communication string

const (
	// CommHPush: the agent PUTs the object to the transformer and reads the result from the reply.
	CommHPush Communication = "hpush"
	// CommHPull: the transformer fetches the object from the agent, which answers the client.
	CommHPull Communication = "hpull"
	// CommIO: the transformer is a command reading stdin and writing stdout, run per object by a shim.
	CommIO Communication = "io"
	// CommWS: objects stream over a pool of WebSocket connections.
	CommWS Communication = "ws"
)

// Communications lists every communication type.
var Communications = []Communication{CommHPush, CommHPull, CommIO, CommWS}

// IOMode is how an io transformer's command runs.
// +kubebuilder:validation:Enum=PerObject;Persistent
type IOMode string

const (
	// IOPerObject runs the command once per object: the object on stdin, the result on stdout.
	IOPerObject IOMode = "PerObject"
	// IOPersistent runs the command once per worker; it reads object after object on stdin and
	// answers each on stdout, in the length-prefixed framing of package sdk/ioframe.
	IOPersistent IOMode = "Persistent"
)

// Argument is what the transformer receives for each object.
// +kubebuilder:validation:Enum="";fqn;url
type Argument string

const (
	// ArgBytes: the object's bytes.
	ArgBytes Argument = ""
	// ArgFQN: the object's path on the node, for transformers that read it themselves.
	ArgFQN Argument = "fqn"
	// ArgURL: a URL the transformer fetches the object from.
	ArgURL Argument = "url"
)

// FailurePolicy says what a failed transformer does to its Transform.
// +kubebuilder:validation:Enum=Abort;Restart
type FailurePolicy string

const (
	// FailureAbort aborts the whole Transform, as AIStore does.
	FailureAbort FailurePolicy = "Abort"
	// FailureRestart replaces the failed pod, with backoff.
	FailureRestart FailurePolicy = "Restart"
)

// Defaults the admission webhook fills in.
const (
	DefaultCommunication = CommHPush
	DefaultInitTimeout   = 45 * time.Second
	DefaultObjectTimeout = 10 * time.Second
	// MaxInitTimeout and MaxObjectTimeout bound the timeouts, so that a stuck transformer pod or
	// object is given up on within a bounded time.
	MaxInitTimeout       = 30 * time.Minute
	MaxObjectTimeout     = time.Hour
	DefaultPort          = int32(8000)
	DefaultPortName      = "default"
	DefaultFunction      = "transform"
	DefaultFailurePolicy = FailureAbort
)

// Bounds of a Transform's spec. A tenant's Transform is stored in etcd (1.5 MiB a request), cached
// whole by the manager, and rendered into one pod per node, so every string and list a user sets
// has a bound that real use stays far below; the CRD's markers repeat them (webhook/transform's
// crd_test keeps the two equal) and the webhook names the field and the bound.
const (
	// MaxCodeSource bounds spec.code.source. The source reaches the runtime as one environment
	// variable, and Linux refuses to exec a process with an environment string over 128 KiB
	// (MAX_ARG_STRLEN); 100 KiB leaves room for the name and is far more than a transform
	// function needs (larger code belongs in an image: spec.runtime).
	MaxCodeSource = 100 << 10
	// MaxCodeDependencies bounds spec.code.dependencies, a pip requirements text, also passed as
	// an environment variable.
	MaxCodeDependencies = 16 << 10
	// MaxCodeFunction bounds spec.code.function, a Python identifier.
	MaxCodeFunction = 128
	// MaxCodeRuntime bounds spec.code.runtime, one of CodeRuntimes.
	MaxCodeRuntime = 64
	// MaxImage bounds spec.runtime.image: a registry host, a 255-character repository path, a
	// 128-character tag and a digest fit.
	MaxImage = 1024
	// MaxCommandItems and MaxCommandItem bound spec.runtime.command and spec.runtime.args: the
	// number of words and each word, well under the kernel's 128 KiB a word.
	MaxCommandItems = 256
	MaxCommandItem  = 32 << 10
	// MaxEnv bounds spec.env and spec.runtime.env, each.
	MaxEnv = 256
	// MaxNodeSelector bounds spec.nodeSelector's pairs.
	MaxNodeSelector = 64
	// MaxTolerations bounds spec.tolerations.
	MaxTolerations = 64
)

// RuntimeSpec describes a transformer by its image and command; the controller builds the pod.
type RuntimeSpec struct {
	// image is the transformer container's image.
	// +kubebuilder:validation:MaxLength=1024
	Image string `json:"image"`
	// command replaces the image's entrypoint. With communication io, command and args are run
	// once per object, reading the object on stdin and writing the result to stdout.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=32768
	Command []string `json:"command,omitempty"`
	// args are the arguments of the command, or of the image's entrypoint.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=32768
	Args []string `json:"args,omitempty"`
	// env is added to the transformer container's environment, as spec.env is.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Env []corev1.EnvVar `json:"env,omitempty"`
	// resources are the transformer container's CPU and memory requests and limits.
	// +optional
	Resources corev1.ResourceRequirements `json:"resources,omitempty"`
}

// CodeSpec describes a transformer by its source code, run by one of mlkube's runtime images.
type CodeSpec struct {
	// runtime names the runtime image that runs the code: python3.11.
	// +kubebuilder:validation:MaxLength=64
	Runtime string `json:"runtime"`
	// source is the code, at most 100 KiB; it must define the function named by function.
	// +kubebuilder:validation:MaxLength=102400
	Source string `json:"source"`
	// dependencies is a pip requirements text, installed before the code runs, at most 16 KiB.
	// +optional
	// +kubebuilder:validation:MaxLength=16384
	Dependencies string `json:"dependencies,omitempty"`
	// function is the name of the function called per object. Defaults to transform.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Function string `json:"function,omitempty"`
	// chunkSize streams each object to the function in chunks of this many bytes; 0 (the
	// default) passes whole objects.
	// +optional
	ChunkSize int64 `json:"chunkSize,omitempty"`
}

// TransformSpec is the desired state of a Transform. Exactly one of Runtime, PodTemplate and Code
// describes the transformer.
type TransformSpec struct {
	// runtime describes the transformer by an image and its command; the controller builds the
	// pod. One of runtime, podTemplate and code.
	// +optional
	Runtime *RuntimeSpec `json:"runtime,omitempty"`
	// podTemplate describes the transformer by a full pod template, with exactly one container
	// and a port named default. One of runtime, podTemplate and code.
	// +optional
	PodTemplate *corev1.PodTemplateSpec `json:"podTemplate,omitempty"`
	// code describes the transformer by its source code, run by one of mlkube's runtime
	// images. One of runtime, podTemplate and code.
	// +optional
	Code *CodeSpec `json:"code,omitempty"`

	// communication is how the node agent hands objects to the transformer: hpush (the agent
	// PUTs the object and reads the result from the reply), hpull (the transformer fetches the
	// object from the agent), io (a command reading stdin and writing stdout, run per object) or
	// ws (objects stream over WebSocket connections). Defaults to hpush.
	// +optional
	Communication Communication `json:"communication,omitempty"`
	// ioMode is how communication io runs its command: PerObject (the default) starts it for
	// every object; Persistent starts it once per worker and sends it object after object, each
	// length-prefixed on stdin, its result likewise on stdout (docs/transforms.md). Only with
	// communication io.
	// +optional
	IOMode IOMode `json:"ioMode,omitempty"`
	// argument is what the transformer receives for each object: "" (the default) its bytes,
	// fqn its path on the node, or url a URL to fetch it from.
	// +optional
	Argument Argument `json:"argument,omitempty"`
	// initTimeout bounds how long a transformer may take to become ready, at most 30m.
	// Defaults to 45s.
	// +optional
	InitTimeout *metav1.Duration `json:"initTimeout,omitempty"`
	// objectTimeout bounds the transformation of one object, at most 1h. Defaults to 10s.
	// +optional
	ObjectTimeout *metav1.Duration `json:"objectTimeout,omitempty"`
	// env is added to the transformer container's environment.
	// +optional
	// +kubebuilder:validation:MaxItems=256
	Env []corev1.EnvVar `json:"env,omitempty"`
	// nodeSelector picks the nodes that run a transformer; by default every node with a data
	// path agent.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// tolerations let transformer pods run on tainted nodes.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// stopped deletes the transformer pods but keeps the Transform; false starts them again.
	// +optional
	Stopped bool `json:"stopped,omitempty"`
	// failurePolicy says what a failed transformer pod does: Abort aborts the whole Transform,
	// Restart replaces the pod, with backoff. Defaults to Abort.
	// +optional
	FailurePolicy FailurePolicy `json:"failurePolicy,omitempty"`
}

// Stage is the life-cycle stage of a Transform.
type Stage string

const (
	StageInitializing Stage = "Initializing"
	StageRunning      Stage = "Running"
	StageAborted      Stage = "Aborted"
	StageStopped      Stage = "Stopped"
)

// Counters are the data path's per-object counters.
type Counters struct {
	// objects is the number of objects transformed.
	Objects int64 `json:"objects,omitempty"`
	// bytesIn is the number of bytes handed to the transformer.
	BytesIn int64 `json:"bytesIn,omitempty"`
	// bytesOut is the number of bytes the transformer returned.
	BytesOut int64 `json:"bytesOut,omitempty"`
	// errors is the number of objects whose transformation failed.
	Errors int64 `json:"errors,omitempty"`
}

// NodeStatus is the state of the transformer on one node.
type NodeStatus struct {
	// node is the node's name.
	Node string `json:"node"`
	// pod is the name of the node's transformer pod.
	// +optional
	Pod string `json:"pod,omitempty"`
	// ip is the transformer pod's IP address.
	// +optional
	IP string `json:"ip,omitempty"`
	// port is the transformer's port, where the node agent reaches it.
	// +optional
	Port int32 `json:"port,omitempty"`
	// ready says whether the transformer is ready to take objects.
	// +optional
	Ready bool `json:"ready,omitempty"`
	// tokenKey is the ID of the cluster key (in the Secret transformer-token-keys of the node
	// agents' namespace) that the node's transformer pod's credential was derived with: the node
	// agent derives the same credential with it. A key still named here must not be removed.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	TokenKey string `json:"tokenKey,omitempty"`
	// restarts counts the times the node's transformer pod was replaced (failurePolicy Restart).
	// +optional
	Restarts int32 `json:"restarts,omitempty"`
	// Counters are the node's data path counters.
	// +optional
	Counters `json:",inline"`
}

// ObjectError is one failed object, as AIStore's per-object error list records it. Object and
// Message are cut to MaxObjectErrorText bytes by whoever records them (Truncated), so that status
// with MaxObjectErrors of them stays far below etcd's object size limit.
type ObjectError struct {
	// object is the failed object's name, cut to 1024 bytes.
	// +kubebuilder:validation:MaxLength=1024
	Object string `json:"object"`
	// message says why it failed, cut to 1024 bytes.
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
	// statusCode is the HTTP status of the failure, e.g. 504 for a timeout.
	StatusCode int32 `json:"statusCode,omitempty"`
	// node is the node whose agent saw the failure.
	Node string `json:"node,omitempty"`
	// time is when the object failed.
	Time metav1.Time `json:"time,omitempty"`
}

// MaxObjectErrors is how many recent per-object errors status keeps.
const MaxObjectErrors = 128

// MaxObjectErrorText bounds an ObjectError's Object and Message in bytes; the CRD's MaxLength
// markers repeat it.
const MaxObjectErrorText = 1024

// Truncated returns e with Object and Message cut to MaxObjectErrorText bytes at a character
// boundary, marked with a trailing "…" where cut.
func (e ObjectError) Truncated() ObjectError {
	e.Object, e.Message = truncate(e.Object, MaxObjectErrorText), truncate(e.Message, MaxObjectErrorText)
	return e
}

func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…"
	cut := max - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}

// TransformStatus is the observed state of a Transform.
type TransformStatus struct {
	// stage is the Transform's life-cycle stage: Initializing, Running, Aborted or Stopped.
	// +optional
	Stage Stage `json:"stage,omitempty"`
	// reason says why the Transform is in its stage, e.g. which transformer failed.
	// +optional
	Reason string `json:"reason,omitempty"`
	// conditions are the Transform's conditions, at most one of each type.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// nodesReady is "<ready>/<total>" transformers, for kubectl get.
	// +optional
	NodesReady string `json:"nodesReady,omitempty"`
	// nodes holds the transformer of each eligible node.
	// +optional
	// +listType=map
	// +listMapKey=node
	Nodes []NodeStatus `json:"nodes,omitempty"`
	// totals sums the counters of every node.
	// +optional
	Totals Counters `json:"totals,omitempty"`
	// errors holds the most recent per-object errors, at most 128.
	// +optional
	// +kubebuilder:validation:MaxItems=128
	Errors []ObjectError `json:"errors,omitempty"`
	// observedGeneration is the metadata.generation the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Transform is user transformation code run next to the data, one transformer pod per node.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=etl,categories=mlkube
// +kubebuilder:printcolumn:name="Communication",type=string,JSONPath=`.spec.communication`
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.status.stage`
// +kubebuilder:printcolumn:name="Nodes",type=string,JSONPath=`.status.nodesReady`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Transform struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the Transform's desired state: the transformer and how objects reach it.
	Spec TransformSpec `json:"spec,omitempty"`
	// status is the Transform's observed state, written by the controller.
	Status TransformStatus `json:"status,omitempty"`
}

// TransformList is a list of Transforms.
//
// +kubebuilder:object:root=true
type TransformList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the Transforms.
	Items []Transform `json:"items"`
}

// CodeRuntimes lists the runtimes spec.code.runtime may name: those mlkube ships an image for.
var CodeRuntimes = []string{"python3.11"}
