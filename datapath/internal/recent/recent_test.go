package recent

import (
	"strings"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// A flood of failures with long names must not grow what status holds: the ring keeps at most
// MaxObjectErrors errors, each cut to MaxObjectErrorText bytes.
func TestErrorsBoundWhatTheyKeep(t *testing.T) {
	var r Errors
	long := strings.Repeat("x", 64<<10)
	for range 3 * etlv1alpha1.MaxObjectErrors {
		r.Add(etlv1alpha1.ObjectError{Object: long, Message: long})
	}
	got := r.Snapshot()
	if len(got) != etlv1alpha1.MaxObjectErrors {
		t.Fatalf("ring holds %d errors, want %d", len(got), etlv1alpha1.MaxObjectErrors)
	}
	for _, e := range got {
		if len(e.Object) > etlv1alpha1.MaxObjectErrorText || len(e.Message) > etlv1alpha1.MaxObjectErrorText {
			t.Fatalf("an error kept %d and %d bytes, want at most %d each", len(e.Object), len(e.Message), etlv1alpha1.MaxObjectErrorText)
		}
	}
}
