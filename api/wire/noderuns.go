package wire

import (
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// The manager → agent contract of TransformRuns: the TransformRun controller hands each chosen
// node its share of a run and follows it there. Only the manager calls it: the agent asks RBAC
// for verb "create" on the non-resource URL NodeRunsPath, which only the manager's ClusterRole
// grants.
//
//	PUT    /v1/runs/{namespace}/{run}          NodeRunSpec → 200 NodeRunStatus
//	GET    /v1/runs/{namespace}/{run}?uid=U    → 200 NodeRunStatus, 404 when the agent holds no such run
//	DELETE /v1/runs/{namespace}/{run}?uid=U    stops the run (workers finish their current object) → 200 NodeRunStatus
//
// PUT is idempotent: it starts the node's share, or resumes it from its journal (after an agent
// restart, or Suspend going back to false), or answers the run going on. The journal lives in the
// destination (JournalDir) and is keyed by the TransformRun's UID, so a run recreated under the same
// name starts over and a resumed one never writes an object twice. A node with no objects of the
// source succeeds at once with zero counts.

// NodeRunsPath is the prefix of the node runs API.
const NodeRunsPath = "/v1/runs/"

// NodeRunSpec is one node's share of a TransformRun, as the controller sends it (defaults applied
// by the webhook).
type NodeRunSpec struct {
	// UID is the TransformRun's UID.
	UID string `json:"uid"`
	// Pipeline is spec.transform: a Transform of the namespace or "a>>b".
	Pipeline        string                     `json:"pipeline"`
	Args            string                     `json:"args,omitempty"`
	Source          etlv1alpha1.RunSource      `json:"source"`
	Destination     etlv1alpha1.RunDestination `json:"destination"`
	Workers         int                        `json:"workers"`
	DryRun          bool                       `json:"dryRun,omitempty"`
	Check           bool                       `json:"check,omitempty"`
	ContinueOnError bool                       `json:"continueOnError,omitempty"`
	Overwrite       bool                       `json:"overwrite,omitempty"`
	// SourceStore is source.store's ObjectStore as the manager read it; nil for a source in the
	// node tier. Its keys are not in it: the agent reads them itself.
	SourceStore *RunStore `json:"sourceStore,omitempty"`
	// DestinationStore is destination.store's ObjectStore, as SourceStore; nil for the node tier.
	DestinationStore *RunStore `json:"destinationStore,omitempty"`
	// Nodes are the run's nodes. A store's objects are shared among them as the node tier places
	// their results (package placement), so each node fetches the results it will hold.
	Nodes []string `json:"nodes,omitempty"`
}

// MaxRunNodes bounds NodeRunSpec.Nodes: Kubernetes' largest supported cluster.
const MaxRunNodes = 5000

// RunStore is an ObjectStore of the run's namespace, by name and defaulted spec.
type RunStore struct {
	Name string                      `json:"name"`
	Spec etlv1alpha1.ObjectStoreSpec `json:"spec"`
}

// NodeRunStatus is one agent's view of its share of a run.
type NodeRunStatus struct {
	UID  string `json:"uid"`
	Node string `json:"node"`
	// Phase is Running, Succeeded, Failed or Suspended (stopped by DELETE).
	Phase   etlv1alpha1.RunPhase `json:"phase"`
	Message string               `json:"message,omitempty"`
	etlv1alpha1.RunCounts
	// Listed says the share's source was listed to its end: PlannedObjects is final, so the
	// manager can tell when the share should end from its rate.
	Listed bool `json:"listed,omitempty"`
	// Errors are the most recent failed objects, at most etlv1alpha1.MaxRunErrors.
	Errors   []etlv1alpha1.ObjectError `json:"errors,omitempty"`
	Started  time.Time                 `json:"started"`
	Finished *time.Time                `json:"finished,omitempty"`
}

// JournalDir is where a node keeps the journal of run uid, under the destination prefix dst:
// hidden (listings and prefix sources skip names starting with "."), beside the results.
func JournalDir(dst, uid string) string { return dst + "/.mlkube-run-" + uid }

// ErrorManifest is the JSON lines file (one etlv1alpha1.ObjectError a line) each node writes
// under the destination prefix with every failed object of run uid when its share ends.
func ErrorManifest(uid string) string { return "mlkube-errors-" + uid + ".jsonl" }

// StoreErrorManifest is ErrorManifest under a destination in an ObjectStore, which all the nodes
// share: each node's is named for it.
func StoreErrorManifest(uid, node string) string {
	return "mlkube-errors-" + uid + "-" + node + ".jsonl"
}

// StoreJournalDir is the directory of the namespace's data on each node that holds the journal of
// run uid when its destination is an ObjectStore.
func StoreJournalDir(uid string) string { return ".mlkube-runs/" + uid }
