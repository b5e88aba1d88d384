package wire

import etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"

// The agent → manager contract: an agent answers GET StatsPath with its StatsReport, per
// Transform the node's counters and its most recent per-object errors. The controller pulls it
// from every agent and folds it into Transform status, so the data path never writes status per
// object. It reuses the API's Counters and ObjectError so that the controller copies entries
// without converting them.

// StatsPath is where an agent serves its StatsReport.
const StatsPath = "/v1/stats"

// StatsReport is one agent's statistics.
type StatsReport struct {
	// Node is the node the agent runs on.
	Node string `json:"node"`
	// Transforms is keyed by StatsKey.
	Transforms map[string]TransformStats `json:"transforms"`
}

// TransformStats is what one agent saw of one Transform since it started.
type TransformStats struct {
	Counters etlv1alpha1.Counters `json:"counters"`
	// Errors are the most recent failed objects, oldest first, at most
	// etlv1alpha1.MaxObjectErrors.
	Errors []etlv1alpha1.ObjectError `json:"errors,omitempty"`
}

// StatsKey is the key of a Transform in StatsReport.Transforms: "namespace/name".
func StatsKey(namespace, name string) string { return namespace + "/" + name }
