package etl

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func runStatus(phase v1alpha1.RunPhase, doneObjects, skipped, failed, planned int64, rate, eta string) v1alpha1.TransformRunStatus {
	return v1alpha1.TransformRunStatus{Phase: phase, Rate: rate, ETA: eta, Totals: v1alpha1.RunCounts{
		PlannedObjects: planned, DoneObjects: doneObjects, SkippedObjects: skipped, FailedObjects: failed}}
}

func TestProgressLines(t *testing.T) {
	cases := map[string]struct {
		st            v1alpha1.TransformRunStatus
		text, withBar string
	}{
		"not started": {
			st:      v1alpha1.TransformRunStatus{},
			text:    "Pending 0/0 objects",
			withBar: "[........................] Pending 0/0 objects",
		},
		"running, skipped objects count as done": {
			st:      runStatus(v1alpha1.RunRunning, 400, 100, 0, 1000, "120 obj/s, 3.1 MB/s", "4s"),
			text:    "Running 500/1000 objects, 120 obj/s, 3.1 MB/s, ETA 4s",
			withBar: "[############............] Running 500/1000 objects, 120 obj/s, 3.1 MB/s, ETA 4s",
		},
		"failed objects": {
			st:      runStatus(v1alpha1.RunFailed, 998, 0, 2, 1000, "90 obj/s, 1.0 MB/s", ""),
			text:    "Failed 998/1000 objects, 2 failed, 90 obj/s, 1.0 MB/s",
			withBar: "[#######################.] Failed 998/1000 objects, 2 failed, 90 obj/s, 1.0 MB/s",
		},
		"done": {
			st:      runStatus(v1alpha1.RunSucceeded, 7, 0, 0, 7, "", ""),
			text:    "Succeeded 7/7 objects",
			withBar: "[########################] Succeeded 7/7 objects",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.text, ProgressText(tc.st)); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.withBar, ProgressBar(tc.st)); diff != "" {
				t.Errorf("bar (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProgressDraws(t *testing.T) {
	updates := []v1alpha1.TransformRunStatus{
		runStatus(v1alpha1.RunRunning, 0, 0, 0, 4, "", ""),
		runStatus(v1alpha1.RunRunning, 0, 0, 0, 4, "", ""), // unchanged: not drawn again
		runStatus(v1alpha1.RunRunning, 2, 0, 0, 4, "2 obj/s, 0.0 MB/s", "1s"),
		runStatus(v1alpha1.RunSucceeded, 4, 0, 0, 4, "", ""),
	}
	cases := map[string]struct {
		tty  bool
		want string
	}{
		"a terminal: redrawn in place": {tty: true, want: "" +
			"\r[........................] Running 0/4 objects\x1b[K" +
			"\r[############............] Running 2/4 objects, 2 obj/s, 0.0 MB/s, ETA 1s\x1b[K" +
			"\r[########################] Succeeded 4/4 objects\x1b[K\n"},
		"a pipe: a line per change": {tty: false, want: "" +
			"Running 0/4 objects\n" +
			"Running 2/4 objects, 2 obj/s, 0.0 MB/s, ETA 1s\n" +
			"Succeeded 4/4 objects\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			p := NewProgress(&out, tc.tty)
			for _, st := range updates {
				p.Update(st)
			}
			p.Done()
			if diff := cmp.Diff(tc.want, out.String()); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCopyProgress(t *testing.T) {
	var tty, plain bytes.Buffer
	for _, c := range []*copyProgress{
		newCopyProgress(&tty, true, false, "uploaded", 4),
		newCopyProgress(&plain, false, false, "uploaded", 4),
	} {
		c.finished(transfer{object: "a"}, false)
		c.finished(transfer{object: "b"}, true)
		c.done(true)
	}
	wantTTY := "\r[######..................] uploaded 1 of 4 objects\x1b[K" +
		"\r[############............] uploaded 1 of 4 objects, skipped 1\x1b[K\n"
	if diff := cmp.Diff(wantTTY, tty.String()); diff != "" {
		t.Errorf("on a terminal (-want +got):\n%s", diff)
	}
	wantPlain := "uploaded a\nskipped b\nuploaded 1 of 4 objects, skipped 1\n"
	if diff := cmp.Diff(wantPlain, plain.String()); diff != "" {
		t.Errorf("off a terminal (-want +got):\n%s", diff)
	}
}

// TestProgressNodes: on a terminal a line per node under the run's, the block redrawn in place
// (up one line less than it is high); off a terminal the run's line only.
func TestProgressNodes(t *testing.T) {
	st := runStatus(v1alpha1.RunRunning, 2, 0, 1, 4, "", "")
	st.Nodes = []v1alpha1.RunNodeStatus{
		{Node: "a", Phase: v1alpha1.RunRunning, RunCounts: v1alpha1.RunCounts{PlannedObjects: 3, PlannedBytes: 3072, DoneObjects: 2, DoneBytes: 2048, FailedObjects: 1}},
		{Node: "node-b", RunCounts: v1alpha1.RunCounts{PlannedObjects: 1}},
	}
	var tty, log strings.Builder
	pt, pl := NewProgress(&tty, true), NewProgress(&log, false)
	for _, p := range []*Progress{pt, pl} {
		p.UpdateNodes(st)
		p.UpdateNodes(st)
		st.Totals.DoneObjects, st.Nodes[1].DoneObjects, st.Nodes[1].Phase = 3, 1, v1alpha1.RunSucceeded
		p.UpdateNodes(st)
		p.Done()
		st.Totals.DoneObjects, st.Nodes[1].DoneObjects, st.Nodes[1].Phase = 2, 0, ""
	}
	wantTTY := "\r[############............] Running 2/4 objects, 1 failed\x1b[K\n" +
		"  a      [########....] Running 2/3 objects, 1 failed, 2.0KiB/3.0KiB\x1b[K\n" +
		"  node-b [............] Pending 0/1 objects, 0B/0B\x1b[K\x1b[J" +
		"\x1b[2A\r[##################......] Running 3/4 objects, 1 failed\x1b[K\n" +
		"  a      [########....] Running 2/3 objects, 1 failed, 2.0KiB/3.0KiB\x1b[K\n" +
		"  node-b [############] Succeeded 1/1 objects, 0B/0B\x1b[K\x1b[J\n"
	if diff := cmp.Diff(wantTTY, tty.String()); diff != "" {
		t.Errorf("terminal (-want +got):\n%s", diff)
	}
	wantLog := "Running 2/4 objects, 1 failed\nRunning 3/4 objects, 1 failed\n"
	if diff := cmp.Diff(wantLog, log.String()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}
