// Package stats is the JSON an agent answers on GET /v1/stats: per Transform,
// the node's counters and its most recent per-object errors. The controller
// pulls it from every agent and folds it into Transform status, so the data
// path never writes status per object. It reuses the API's Counters and
// ObjectError so that the controller copies entries without converting them.
package stats

import etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"

// Path is where an agent serves its Report.
const Path = "/v1/stats"

// Report is one agent's statistics.
type Report struct {
	// Node is the node the agent runs on.
	Node string `json:"node"`
	// Transforms is keyed by "namespace/name".
	Transforms map[string]Transform `json:"transforms"`
}

// Transform is what one agent saw of one Transform since it started.
type Transform struct {
	Counters etlv1alpha1.Counters `json:"counters"`
	// Errors are the most recent failed objects, oldest first, at most
	// etlv1alpha1.MaxObjectErrors.
	Errors []etlv1alpha1.ObjectError `json:"errors,omitempty"`
}

// Key is the key of a Transform in Report.Transforms.
func Key(namespace, name string) string { return namespace + "/" + name }
