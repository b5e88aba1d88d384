package cli

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Resource says how a plugin lists one kind and draws it as kubectl get does.
type Resource[T client.Object] struct {
	// Plural names the kind in messages: "No mxjobs found in namespace default."
	Plural string
	// New returns an empty object of the kind (&v1beta1.MxJob{}).
	New func() T
	// NewList returns an empty list of the kind (&v1beta1.MxJobList{}).
	NewList func() client.ObjectList
	// Columns are the table's columns; the first is the name, and those with Priority 1 are
	// shown by -o wide only.
	Columns []metav1.TableColumnDefinition
	// Row is an object's cells, one per column, at the time now.
	Row func(obj T, now time.Time) []any
}

// Table draws objs as a metav1.Table; each row carries its object, so the printer can add the
// NAMESPACE column of -A.
func (r Resource[T]) Table(objs []runtime.Object, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: r.Columns, Rows: make([]metav1.TableRow, 0, len(objs))}
	for _, o := range objs {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: r.Row(o.(T), now), Object: runtime.RawExtension{Object: o}})
	}
	return t
}

// Age is an AGE cell as kubectl prints it ("5m", "3d"), or "<unknown>" for a zero time.
func Age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// NameColumn is the first column of every table.
var NameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name"}

// AgeColumn is the AGE column, last as in kubectl.
var AgeColumn = metav1.TableColumnDefinition{Name: "Age", Type: "string"}
