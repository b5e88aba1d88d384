package transformrun

import (
	"maps"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// TestShareTrackerKeepsTheLatestAnswer: status holds times to the second, so a node's last answer
// read back from it must not replace the exact time this manager saw, or a grace period would
// shrink.
func TestShareTrackerKeepsTheLatestAnswer(t *testing.T) {
	var m shareTracker
	key := types.NamespacedName{Namespace: "ns", Name: "run"}
	exact := t0.Add(900 * time.Millisecond)
	m.record(key, "u1", []v1alpha1.RunNodeStatus{{Node: "a", LastSeen: &metav1.Time{Time: exact}}}, true, exact)
	m.record(key, "u1", []v1alpha1.RunNodeStatus{{Node: "a", LastSeen: at(0)}}, false, exact.Add(time.Second))
	r, _ := m.lookup(key)
	if got := r.lastSeen("u1", "a"); !got.Equal(exact) {
		t.Errorf("lastSeen %v; want the exact %v", got, exact)
	}
	if got := r.sinceWrite("u1", exact.Add(time.Second)); got != time.Second {
		t.Errorf("sinceWrite %v; want 1s", got)
	}
	if got := r.lastSeen("u2", "a"); !got.IsZero() {
		t.Errorf("a namesake of another UID has lastSeen %v; want none", got)
	}
}

// TestShareTrackerRatesSinceThePreviousPoll: each node's rate is what it processed since the
// manager's previous poll of the run, over the time since; a node the poll did not know, another
// run of the name, or a run never polled has none.
func TestShareTrackerRatesSinceThePreviousPoll(t *testing.T) {
	var m shareTracker
	key := types.NamespacedName{Namespace: "ns", Name: "run"}
	counts := func(node string, done, failed, skipped int64) v1alpha1.RunNodeStatus {
		return v1alpha1.RunNodeStatus{Node: node, RunCounts: v1alpha1.RunCounts{PlannedObjects: 100, DoneObjects: done, FailedObjects: failed, SkippedObjects: skipped}}
	}
	if r, _ := m.lookup(key); r.ratesSince("u1", []v1alpha1.RunNodeStatus{counts("a", 5, 0, 0)}, t0) != nil {
		t.Error("a run never polled has rates")
	}
	m.record(key, "u1", []v1alpha1.RunNodeStatus{counts("a", 10, 0, 50), counts("b", 10, 0, 0)}, false, t0)
	r, _ := m.lookup(key)
	// Skipped objects are not work; an agent that restarted may count fewer.
	got := r.ratesSince("u1", []v1alpha1.RunNodeStatus{counts("a", 30, 2, 60), counts("b", 4, 0, 0), counts("c", 9, 0, 0)}, t0.Add(2*time.Second))
	if want := map[string]float64{"a": 11, "b": 0}; !maps.Equal(got, want) {
		t.Errorf("rates %v; want %v", got, want)
	}
	if got := r.ratesSince("u2", []v1alpha1.RunNodeStatus{counts("a", 30, 0, 0)}, t0.Add(time.Second)); got != nil {
		t.Errorf("a namesake of another UID has rates %v; want none", got)
	}
}
