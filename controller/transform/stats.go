package transform

import (
	"cmp"
	"slices"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// applyStats folds the agents' reports into a Transform's status: counters per node and in total,
// and the most recent per-object errors across nodes, at most MaxObjectErrors.
// Without reports (no collector), the counters already in status stand.
func applyStats(st *v1alpha1.TransformStatus, key string, reports map[string]wire.StatsReport) {
	var errs []v1alpha1.ObjectError
	for i := range st.Nodes {
		n := &st.Nodes[i]
		if r, ok := reports[n.Node].Transforms[key]; ok {
			n.Counters = r.Counters
			errs = append(errs, r.Errors...)
		}
	}
	st.Totals = v1alpha1.Counters{}
	for _, n := range st.Nodes {
		st.Totals.Objects += n.Objects
		st.Totals.BytesIn += n.BytesIn
		st.Totals.BytesOut += n.BytesOut
		st.Totals.Errors += n.Errors
	}
	slices.SortStableFunc(errs, func(a, b v1alpha1.ObjectError) int {
		return cmp.Or(a.Time.Compare(b.Time.Time), cmp.Compare(a.Node, b.Node))
	})
	if len(errs) > v1alpha1.MaxObjectErrors {
		errs = errs[len(errs)-v1alpha1.MaxObjectErrors:]
	}
	if reports != nil && (len(errs) > 0 || st.Errors != nil) {
		st.Errors = errs
	}
}
