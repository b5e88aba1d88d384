package mxjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBackoffDoublesToItsCap(t *testing.T) {
	got := []time.Duration{backoff(1), backoff(2), backoff(3), backoff(10), backoff(100)}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, maxBackoff, maxBackoff}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
}
