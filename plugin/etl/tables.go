package etl

import (
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// Tables are built client-side as metav1.Tables, as kubectl's server-side tables are, so that one
// printer serves them all; columns of Priority 1 show with -o wide. Each row carries its object,
// which the printer reads for the NAMESPACE column of -A.

func column(name string, priority int32) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: "string", Priority: priority}
}

func row(obj runtime.Object, cells ...any) metav1.TableRow {
	return metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}}
}

// form names how a Transform describes its transformer.
func form(s *v1alpha1.TransformSpec) string {
	switch {
	case s.Code != nil:
		return "code/" + s.Code.Runtime
	case s.PodTemplate != nil:
		return "spec"
	case s.Runtime != nil:
		return "runtime"
	}
	return ""
}

// argument spells spec.argument, whose empty value means the object's bytes.
func argument(a v1alpha1.Argument) string {
	if a == v1alpha1.ArgBytes {
		return "bytes"
	}
	return string(a)
}

// stage is the Transform's stage, or what stands in for one the controller has not written yet.
func stage(t *v1alpha1.Transform) string {
	if t.Status.Stage == "" {
		return "Pending"
	}
	return string(t.Status.Stage)
}

// transforms is how `show` lists Transforms: one per row with its stage and the data path's
// counters summed over its nodes.
var transforms = cli.Resource[*v1alpha1.Transform]{
	Plural:  "transforms",
	New:     func() *v1alpha1.Transform { return &v1alpha1.Transform{} },
	NewList: func() client.ObjectList { return &v1alpha1.TransformList{} },
	Columns: []metav1.TableColumnDefinition{
		cli.NameColumn, column("Communication", 0), column("Stage", 0), column("Nodes", 0),
		column("Objects", 0), column("Bytes In", 0), column("Bytes Out", 0), column("Errors", 0),
		cli.AgeColumn, column("Form", 1), column("Argument", 1), column("Reason", 1),
	},
	Row: func(t *v1alpha1.Transform, now time.Time) []any {
		c := t.Status.Totals
		return []any{t.Name, string(t.Spec.Communication), stage(t), t.Status.NodesReady,
			c.Objects, Bytes(c.BytesIn), Bytes(c.BytesOut), c.Errors, cli.Age(t.CreationTimestamp, now),
			form(&t.Spec), argument(t.Spec.Argument), t.Status.Reason}
	},
}

// NodeTable is the table of `details`: one row per node of the Transform.
func NodeTable(t *v1alpha1.Transform) *metav1.Table {
	tbl := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Node", 0), column("Pod", 0), column("Ready", 0), column("Restarts", 0),
		column("Objects", 0), column("Bytes In", 0), column("Bytes Out", 0), column("Errors", 0),
		column("IP", 1), column("Port", 1),
	}}
	for _, n := range t.Status.Nodes {
		tbl.Rows = append(tbl.Rows, row(t, n.Node, orNone(n.Pod), strconv.FormatBool(n.Ready), n.Restarts,
			n.Objects, Bytes(n.BytesIn), Bytes(n.BytesOut), n.Errors, orNone(n.IP), port(n.Port)))
	}
	return tbl
}

// ErrorTable is the table of `errors`: the most recent failed objects, oldest first, as status
// keeps them.
func ErrorTable(owner runtime.Object, errs []v1alpha1.ObjectError, now time.Time) *metav1.Table {
	tbl := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Node", 0), column("Object", 0), column("Code", 0), column("Age", 0), column("Message", 0),
	}}
	for _, e := range errs {
		code := ""
		if e.StatusCode != 0 {
			code = strconv.Itoa(int(e.StatusCode))
		}
		tbl.Rows = append(tbl.Rows, row(owner, e.Node, e.Object, code, cli.Age(e.Time, now), e.Message))
	}
	return tbl
}

// Health is one node's transformer as `health` judges it.
type Health string

const (
	Healthy  Health = "Healthy"
	NotReady Health = "NotReady"
	NoPod    Health = "NoPod"
)

func nodeHealth(n v1alpha1.NodeStatus) Health {
	switch {
	case n.Pod == "":
		return NoPod
	case !n.Ready:
		return NotReady
	}
	return Healthy
}

// HealthTable is the table of `health`, and how many nodes are not healthy: a stopped Transform
// has no nodes to judge and counts as none.
func HealthTable(t *v1alpha1.Transform) (*metav1.Table, int) {
	tbl := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Node", 0), column("Pod", 0), column("Health", 0), column("Restarts", 0),
	}}
	unhealthy := 0
	for _, n := range t.Status.Nodes {
		h := nodeHealth(n)
		if h != Healthy {
			unhealthy++
		}
		tbl.Rows = append(tbl.Rows, row(t, n.Node, orNone(n.Pod), string(h), n.Restarts))
	}
	return tbl, unhealthy
}

// NodeUsage is the CPU and memory a node's transformer pod uses, from metrics.k8s.io.
type NodeUsage struct {
	Node, Pod string
	// MilliCPU and MemoryBytes are what the pod's containers use together; Known is false when
	// the metrics API has no sample of the pod (yet).
	MilliCPU, MemoryBytes int64
	Known                 bool
}

// UsageTable is the table of `metrics`, in kubectl top's units.
func UsageTable(owner runtime.Object, usage []NodeUsage) *metav1.Table {
	tbl := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		column("Node", 0), column("Pod", 0), column("CPU(cores)", 0), column("Memory(bytes)", 0),
	}}
	for _, u := range usage {
		cpu, mem := "<unknown>", "<unknown>"
		if u.Known {
			cpu, mem = fmt.Sprintf("%dm", u.MilliCPU), fmt.Sprintf("%dMi", u.MemoryBytes/(1<<20))
		}
		tbl.Rows = append(tbl.Rows, row(owner, u.Node, orNone(u.Pod), cpu, mem))
	}
	return tbl
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func port(p int32) string {
	if p == 0 {
		return "<none>"
	}
	return strconv.Itoa(int(p))
}

// Bytes spells a byte count in binary units with one decimal, as people read sizes of files.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + "B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f%ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
