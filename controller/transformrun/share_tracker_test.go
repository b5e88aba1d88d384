package transformrun

import (
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
