package etl

import (
	"cmp"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// transformRuns is how `runs list` and `runs get` print TransformRuns: the columns of kubectl get
// etlrun, with the failed objects, and with -o wide the ETA, source and destination.
var transformRuns = cli.Resource[*v1alpha1.TransformRun]{
	Plural:  "transformruns",
	New:     func() *v1alpha1.TransformRun { return &v1alpha1.TransformRun{} },
	NewList: func() client.ObjectList { return &v1alpha1.TransformRunList{} },
	Columns: []metav1.TableColumnDefinition{
		cli.NameColumn, column("Transform", 0), column("Phase", 0), column("Progress", 0),
		column("Failed", 0), column("Rate", 0), cli.AgeColumn,
		column("ETA", 1), column("Source", 1), column("Destination", 1),
	},
	Row: func(r *v1alpha1.TransformRun, now time.Time) []any {
		st := r.Status
		return []any{r.Name, r.Spec.Transform, string(phase(st)), progress(st), st.Totals.FailedObjects,
			orNone(st.Rate), cli.Age(r.CreationTimestamp, now), orNone(st.ETA), source(&r.Spec.Source), r.Spec.Destination.Prefix}
	},
}

// progress is status.progress, or what it says before the controller wrote it.
func progress(st v1alpha1.TransformRunStatus) string {
	if st.Progress != "" {
		return st.Progress
	}
	return strconv.FormatInt(done(st.Totals), 10) + "/" + strconv.FormatInt(st.Totals.PlannedObjects, 10)
}

// source spells a run's source: its prefix, template, or the number of objects listed, and the
// extension picked.
func source(s *v1alpha1.RunSource) string {
	var src string
	switch {
	case s.Template != "":
		src = s.Template
	case len(s.Objects) > 0:
		src = strconv.Itoa(len(s.Objects)) + " objects"
	default:
		src = s.Prefix + "/"
	}
	if s.Extension != "" {
		src += " (*" + s.Extension + ")"
	}
	return src
}

// RunNodeTable is one row per node of a run: its phase, counts and bytes, its own rate and ETA
// while its share runs, and why it failed.
func RunNodeTable(r *v1alpha1.TransformRun, now time.Time) *metav1.Table {
	tbl := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Node", 0), column("Phase", 0), column("Done", 0), column("Skipped", 0), column("Failed", 0),
		column("Planned", 0), column("Bytes", 0), column("Rate", 0), column("ETA", 0), column("Last Seen", 0), column("Message", 0),
	}}
	for _, n := range r.Status.Nodes {
		seen := "<none>"
		if n.LastSeen != nil {
			seen = cli.Age(*n.LastSeen, now)
		}
		rate := v1alpha1.RateText(float64(n.ObjectsPerSecond), float64(n.BytesPerSecond))
		eta := v1alpha1.ETAText(n.Left(), float64(n.ObjectsPerSecond))
		tbl.Rows = append(tbl.Rows, row(r, n.Node, string(orPending(n.Phase)), n.DoneObjects, n.SkippedObjects, n.FailedObjects,
			n.PlannedObjects, Bytes(n.DoneBytes)+"/"+Bytes(n.PlannedBytes), cmp.Or(rate, "<none>"), cmp.Or(eta, "<none>"), seen, n.Message))
	}
	return tbl
}

// PlanTable is what a counting run found: the objects and bytes of each node, and their sum.
func PlanTable(r *v1alpha1.TransformRun) *metav1.Table {
	tbl := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Node", 0), column("Objects", 0), column("Bytes", 0),
	}}
	for _, n := range r.Status.Nodes {
		tbl.Rows = append(tbl.Rows, row(r, n.Node, n.PlannedObjects, Bytes(n.PlannedBytes)))
	}
	t := r.Status.Totals
	tbl.Rows = append(tbl.Rows, row(r, "TOTAL", t.PlannedObjects, Bytes(t.PlannedBytes)))
	return tbl
}
