package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What `describe` prints in both plugins, laid out as kubectl describe lays it out.

// NewDescribeWriter is the writer describe lays its sections out with: text/tabwriter rather
// than kubectl's, which remembers widths across flushes, so each section flushed is aligned on
// its own.
func NewDescribeWriter(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)
}

// WriteHeader writes the lines describe begins with in both plugins: name, namespace, labels
// and when the object was created.
func WriteHeader(w io.Writer, obj metav1.Object, now time.Time) {
	created := obj.GetCreationTimestamp()
	fmt.Fprintf(w, "Name:\t%s\n", obj.GetName())
	fmt.Fprintf(w, "Namespace:\t%s\n", obj.GetNamespace())
	fmt.Fprintf(w, "Labels:\t%s\n", LabelsString(obj.GetLabels()))
	fmt.Fprintf(w, "Created:\t%s (%s ago)\n", created.UTC().Format(time.RFC3339), Age(created, now))
}

// MaxEvents bounds the events describe shows, the most recent ones.
const MaxEvents = 20

// EventsOf lists the events of the objects named (an MxJob and its pods, a Transform and its
// transformer pods) in namespace ns.
func EventsOf(ctx context.Context, c client.Reader, ns string, names ...string) ([]corev1.Event, error) {
	var all []corev1.Event
	for _, name := range names {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace(ns),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("involvedObject.name", name)}); err != nil {
			return nil, fmt.Errorf("events of %s: %w", name, err)
		}
		all = append(all, events.Items...)
	}
	return all, nil
}

// EventsSection is the Events section: the most recent MaxEvents, oldest first.
func EventsSection(events []corev1.Event, now time.Time) Section {
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	if len(events) > MaxEvents {
		events = events[len(events)-MaxEvents:]
	}
	sec := Section{Title: "Events", Columns: []string{"TYPE", "REASON", "AGE", "FROM", "MESSAGE"}}
	for _, e := range events {
		age := Age(metav1.NewTime(eventTime(e)), now)
		if e.Count > 1 {
			age = fmt.Sprintf("%s (x%d)", age, e.Count)
		}
		sec.Rows = append(sec.Rows, []any{e.Type, e.Reason, age, eventSource(e), strings.TrimSpace(e.Message)})
	}
	return sec
}

// Section is one table of describe: a title, then a row of cells a line under the column
// names, or <none> beside the title when there are no rows.
type Section struct {
	Title   string
	Columns []string
	Rows    [][]any
}

func (s Section) write(w io.Writer) {
	fmt.Fprintf(w, "%s:", s.Title)
	if len(s.Rows) == 0 {
		fmt.Fprintf(w, "\t<none>\n")
		return
	}
	fmt.Fprintf(w, "\n  %s\n", strings.Join(s.Columns, "\t"))
	for _, row := range s.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = fmt.Sprint(c)
		}
		fmt.Fprintf(w, "  %s\n", strings.Join(cells, "\t"))
	}
}

// WriteSections writes sections, flushing w after each so that each is aligned on its own.
func WriteSections(w *tabwriter.Writer, sections ...Section) error {
	for _, s := range sections {
		s.write(w)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// ConditionsSection is the Conditions of an object's status.
func ConditionsSection(conds []metav1.Condition, now time.Time) Section {
	sec := Section{Title: "Conditions", Columns: []string{"TYPE", "STATUS", "REASON", "AGE", "MESSAGE"}}
	for _, c := range conds {
		sec.Rows = append(sec.Rows, []any{c.Type, c.Status, c.Reason, Age(c.LastTransitionTime, now), c.Message})
	}
	return sec
}

// TableSection is a table (a plugin's own, as its list prints it) as a section, its column
// names in capitals.
func TableSection(title string, t *metav1.Table) Section {
	sec := Section{Title: title}
	for _, c := range t.ColumnDefinitions {
		sec.Columns = append(sec.Columns, strings.ToUpper(c.Name))
	}
	for _, row := range t.Rows {
		sec.Rows = append(sec.Rows, row.Cells)
	}
	return sec
}

// eventTime is when an event last happened, whichever API wrote it.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func eventSource(e corev1.Event) string {
	if e.Source.Component != "" {
		return e.Source.Component
	}
	return e.ReportingController
}

// PodStatus is a pod's state as kubectl get pods shows it: a waiting or terminated container's
// reason when there is one (ImagePullBackOff, CrashLoopBackOff), else the phase.
func PodStatus(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "Terminating"
	}
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
			return cs.State.Waiting.Reason
		case cs.State.Terminated != nil && cs.State.Terminated.Reason != "":
			return cs.State.Terminated.Reason
		}
	}
	if p.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(p.Status.Phase)
}

// PodRestarts sums the container restarts of a pod.
func PodRestarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// LabelsString is labels as describe prints them: k=v, sorted, or <none>.
func LabelsString(l map[string]string) string {
	if len(l) == 0 {
		return "<none>"
	}
	var kv []string
	for k, v := range l {
		kv = append(kv, k+"="+v)
	}
	slices.Sort(kv)
	return strings.Join(kv, ",")
}

// OrNone is s, or <none> when empty, as kubectl prints a missing value.
func OrNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
