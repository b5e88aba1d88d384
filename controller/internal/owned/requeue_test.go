package owned

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBackoffDoublesToItsCap(t *testing.T) {
	got := []time.Duration{Backoff(1), Backoff(2), Backoff(3), Backoff(10), Backoff(100)}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, MaxBackoff, MaxBackoff}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
}

func TestSoonerKeepsTheEarliestDelay(t *testing.T) {
	tests := map[string]struct {
		current, after, want time.Duration
	}{
		"none yet":           {current: 0, after: time.Minute, want: time.Minute},
		"sooner replaces":    {current: time.Minute, after: time.Second * 10, want: time.Second * 10},
		"later is ignored":   {current: time.Second * 10, after: time.Minute, want: time.Second * 10},
		"already due: in 1s": {current: 0, after: -time.Minute, want: time.Second},
		"exactly due: in 1s": {current: time.Minute, after: 0, want: time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := Sooner(tc.current, tc.after); got != tc.want {
				t.Errorf("Sooner(%v, %v) = %v, want %v", tc.current, tc.after, got, tc.want)
			}
		})
	}
}
