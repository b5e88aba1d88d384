package transformrun

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func share(node string, c v1alpha1.RunCounts) v1alpha1.RunNodeStatus {
	return v1alpha1.RunNodeStatus{Node: node, RunCounts: c}
}

func TestRecentRates(t *testing.T) {
	before := []v1alpha1.RunNodeStatus{
		share("a", v1alpha1.RunCounts{DoneObjects: 100, DoneBytes: 1000}),
		share("b", v1alpha1.RunCounts{DoneObjects: 500, DoneBytes: 5000}),
	}
	after := []v1alpha1.RunNodeStatus{
		share("a", v1alpha1.RunCounts{DoneObjects: 150, FailedObjects: 10, DoneBytes: 1500}),
		// b's agent restarted: its counts start over, the journal's objects are skipped.
		share("b", v1alpha1.RunCounts{DoneObjects: 20, SkippedObjects: 500, DoneBytes: 200}),
		share("c", v1alpha1.RunCounts{DoneObjects: 20, DoneBytes: 300}), // new to the snapshot
	}
	cases := map[string]struct {
		prev    rates
		elapsed time.Duration
		want    rates
	}{
		// a: 60 objects, 500 bytes; b: none (no negative work, skipped is not work); c: 20, 300.
		"the first sample is the rate": {elapsed: 2 * time.Second, want: rates{objects: 40, bytes: 400}},
		"later samples move the rate toward them": {prev: rates{objects: 10, bytes: 100}, elapsed: 2 * time.Second,
			want: rates{objects: 10 + 30*(1-math.Exp(-0.1)), bytes: 100 + 300*(1-math.Exp(-0.1))}},
		"no time passed: the rate stands": {prev: rates{objects: 7, bytes: 70}, want: rates{objects: 7, bytes: 70}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := recentRates(tc.prev, before, after, tc.elapsed)
			if math.Abs(got.objects-tc.want.objects) > 1e-9 || math.Abs(got.bytes-tc.want.bytes) > 1e-9 {
				t.Errorf("recentRates = %+v; want %+v", got, tc.want)
			}
		})
	}
}

func TestETAProgressAndRateText(t *testing.T) {
	totals := v1alpha1.RunCounts{PlannedObjects: 1000, DoneObjects: 300, SkippedObjects: 100, FailedObjects: 100}
	cases := map[string]struct {
		totals  v1alpha1.RunCounts
		rate    rates
		wantETA string
	}{
		"500 left at 3 obj/s":       {totals: totals, rate: rates{objects: 3}, wantETA: "2m47s"},
		"no rate: no estimate":      {totals: totals},
		"nothing left: no estimate": {totals: v1alpha1.RunCounts{PlannedObjects: 5, DoneObjects: 5}, rate: rates{objects: 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := eta(tc.totals, tc.rate); got != tc.wantETA {
				t.Errorf("eta = %q; want %q", got, tc.wantETA)
			}
		})
	}
	if got := progress(totals); got != "400/1000" {
		t.Errorf("progress = %q; want 400/1000 (done or skipped, of planned)", got)
	}
	if got := rateText(rates{objects: 1234.4, bytes: 5.06e6}); got != "1234 obj/s, 5.1 MB/s" {
		t.Errorf("rateText = %q", got)
	}
	if got := rateText(rates{}); got != "" {
		t.Errorf("rateText of no rate = %q; want empty", got)
	}
	if got := averageRates(v1alpha1.RunCounts{DoneObjects: 90, FailedObjects: 10, DoneBytes: 1000}, 10*time.Second); got != (rates{objects: 10, bytes: 100}) {
		t.Errorf("averageRates = %+v; want 10 obj/s, 100 B/s", got)
	}
}

// TestNodeRates: a running node's rate is folded from its own, a node new to the run starts at
// its sample, and a node whose share ended has none.
func TestNodeRates(t *testing.T) {
	node := func(name string, phase v1alpha1.RunPhase, done, objPerSec int64) v1alpha1.RunNodeStatus {
		return v1alpha1.RunNodeStatus{Node: name, Phase: phase, ObjectsPerSecond: objPerSec, BytesPerSecond: objPerSec * 1000,
			RunCounts: v1alpha1.RunCounts{DoneObjects: done, DoneBytes: done * 1000}}
	}
	before := []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunRunning, 100, 10), node("c", v1alpha1.RunRunning, 10, 7)}
	after := []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunRunning, 150, 0), node("b", v1alpha1.RunRunning, 20, 0), node("c", v1alpha1.RunSucceeded, 20, 0)}
	nodeRates(before, after, 10*time.Second)
	var got []string
	for _, n := range after {
		got = append(got, fmt.Sprintf("%s %d obj/s %d B/s", n.Node, n.ObjectsPerSecond, n.BytesPerSecond))
	}
	// a: 10 obj/s folded toward its sample of 5 by 1-e^(-10/20), its bytes alike.
	want := []string{"a 8 obj/s 8033 B/s", "b 2 obj/s 2000 B/s", "c 0 obj/s 0 B/s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node rates (-want +got):\n%s", diff)
	}
}
