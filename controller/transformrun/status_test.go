package transformrun

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { return &metav1.Time{Time: t0.Add(d)} }

func node(name string, phase v1alpha1.RunPhase, c v1alpha1.RunCounts) v1alpha1.RunNodeStatus {
	return v1alpha1.RunNodeStatus{Node: name, Phase: phase, RunCounts: c}
}

// allDone are the counts of a share that transformed all it planned.
var allDone = v1alpha1.RunCounts{PlannedObjects: 10, DoneObjects: 10}

// runPhaseCase is a run's spec and nodes, and the phase and reason runPhase must give them.
type runPhaseCase struct {
	spec       v1alpha1.TransformRunSpec
	nodes      []v1alpha1.RunNodeStatus
	want       v1alpha1.RunPhase
	wantReason string
}

// testRunPhases runs each case through runPhase, which every phase rule meets in: each policy's
// tests drive it so.
func testRunPhases(t *testing.T, cases map[string]runPhaseCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, reason, _ := runPhase(&tc.spec, tc.nodes, sumCounts(tc.nodes))
			if got != tc.want || reason != tc.wantReason {
				t.Errorf("runPhase = %s (%s); want %s (%s)", got, reason, tc.want, tc.wantReason)
			}
		})
	}
}

// TestRunPhase holds the phases no spec field decides; suspend's and continueOnError's are in
// their own files' tests.
func TestRunPhase(t *testing.T) {
	testRunPhases(t, map[string]runPhaseCase{
		"no node chosen yet":   {want: v1alpha1.RunPending},
		"no node took it yet":  {nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunPending, allDone)}, want: v1alpha1.RunPending},
		"one node took it":     {nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunPending, allDone), node("b", v1alpha1.RunRunning, allDone)}, want: v1alpha1.RunRunning},
		"every node succeeded": {nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunSucceeded, allDone), node("b", v1alpha1.RunSucceeded, allDone)}, want: v1alpha1.RunSucceeded, wantReason: v1alpha1.RunReasonCompleted},
	})
}

func TestRunPhaseListsFailedNodes(t *testing.T) {
	nodes := []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunFailed, v1alpha1.RunCounts{}), node("b", v1alpha1.RunFailed, v1alpha1.RunCounts{}), node("c", v1alpha1.RunSucceeded, v1alpha1.RunCounts{})}
	nodes[0].Message = "node a's agent unreachable since …"
	_, _, msg := runPhase(&v1alpha1.TransformRunSpec{ContinueOnError: true}, nodes, v1alpha1.RunCounts{})
	if want := "node a's agent unreachable since …; node b failed"; msg != want {
		t.Errorf("message %q; want %q", msg, want)
	}
}

func runWith(spec v1alpha1.TransformRunSpec, st v1alpha1.TransformRunStatus) *v1alpha1.TransformRun {
	return &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{UID: "u1", Generation: 2}, Spec: spec, Status: st}
}

func TestComputeStatus(t *testing.T) {
	running := v1alpha1.TransformRunStatus{Phase: v1alpha1.RunRunning, StartTime: at(0), ObjectsPerSecond: 10, BytesPerSecond: 1000,
		Nodes: []v1alpha1.RunNodeStatus{
			node("a", v1alpha1.RunRunning, v1alpha1.RunCounts{PlannedObjects: 100, DoneObjects: 40, DoneBytes: 4000}),
			node("b", v1alpha1.RunRunning, v1alpha1.RunCounts{PlannedObjects: 60, DoneObjects: 10, DoneBytes: 1000}),
		}}
	cases := map[string]struct {
		run        *v1alpha1.TransformRun
		nodes      []v1alpha1.RunNodeStatus
		now        time.Duration
		sinceWrite time.Duration
		want       v1alpha1.TransformRunStatus
	}{
		"running: totals, progress, recent rate, ETA": {
			run: runWith(v1alpha1.TransformRunSpec{}, running),
			nodes: []v1alpha1.RunNodeStatus{
				node("a", v1alpha1.RunRunning, v1alpha1.RunCounts{PlannedObjects: 100, DoneObjects: 60, DoneBytes: 6000}),
				node("b", v1alpha1.RunRunning, v1alpha1.RunCounts{PlannedObjects: 60, DoneObjects: 10, DoneBytes: 1000}),
			},
			now: 10 * time.Second, sinceWrite: 20 * time.Second,
			// sample 1 obj/s, 100 B/s; rate 10 + (1-10)(1-1/e) ≈ 4.31 → 4; 90 left at 4.31/s.
			want: v1alpha1.TransformRunStatus{Phase: v1alpha1.RunRunning, StartTime: at(0), ObservedGeneration: 2,
				Totals:   v1alpha1.RunCounts{PlannedObjects: 160, DoneObjects: 70, DoneBytes: 7000},
				Progress: "70/160", ObjectsPerSecond: 4, BytesPerSecond: 431, Rate: "4 obj/s, 0.0 MB/s", ETA: "21s",
				ErrorManifest: "mlkube-errors-u1.jsonl"},
		},
		"succeeded: completion time, average rate, Complete": {
			run: runWith(v1alpha1.TransformRunSpec{}, running),
			nodes: []v1alpha1.RunNodeStatus{
				node("a", v1alpha1.RunSucceeded, v1alpha1.RunCounts{PlannedObjects: 100, DoneObjects: 100, DoneBytes: 10000}),
				node("b", v1alpha1.RunSucceeded, v1alpha1.RunCounts{PlannedObjects: 60, DoneObjects: 20, SkippedObjects: 40, DoneBytes: 2000}),
			},
			now: 40 * time.Second, sinceWrite: time.Second,
			want: v1alpha1.TransformRunStatus{Phase: v1alpha1.RunSucceeded, StartTime: at(0), CompletionTime: at(40 * time.Second), ObservedGeneration: 2,
				Totals:   v1alpha1.RunCounts{PlannedObjects: 160, DoneObjects: 120, SkippedObjects: 40, DoneBytes: 12000},
				Progress: "160/160", ObjectsPerSecond: 3, BytesPerSecond: 300, Rate: "3 obj/s, 0.0 MB/s",
				ErrorManifest: "mlkube-errors-u1.jsonl",
				Conditions: []metav1.Condition{{Type: v1alpha1.RunConditionComplete, Status: metav1.ConditionTrue, Reason: v1alpha1.RunReasonCompleted,
					Message: "160 objects transformed on 2 nodes", ObservedGeneration: 2, LastTransitionTime: *at(40 * time.Second)}}},
		},
		"suspended: no rate, no ETA": {
			run:   runWith(v1alpha1.TransformRunSpec{Suspend: true}, running),
			nodes: withPhase(running.Nodes, v1alpha1.RunSuspended), now: 10 * time.Second, sinceWrite: 5 * time.Second,
			want: v1alpha1.TransformRunStatus{Phase: v1alpha1.RunSuspended, StartTime: at(0), ObservedGeneration: 2,
				Totals:        v1alpha1.RunCounts{PlannedObjects: 160, DoneObjects: 50, DoneBytes: 5000},
				Progress:      "50/160",
				ErrorManifest: "mlkube-errors-u1.jsonl",
				Conditions: []metav1.Condition{{Type: v1alpha1.RunConditionSuspended, Status: metav1.ConditionTrue, Reason: v1alpha1.RunReasonSuspended,
					Message: "spec.suspend is true: the nodes stopped after their current object", ObservedGeneration: 2, LastTransitionTime: *at(10 * time.Second)}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := computeStatus(tc.run, tc.nodes, nil, t0.Add(tc.now), tc.sinceWrite)
			tc.want.Nodes = tc.nodes
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("computeStatus (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetConditionsResume(t *testing.T) {
	st := v1alpha1.TransformRunStatus{Phase: v1alpha1.RunSuspended}
	setConditions(&st, v1alpha1.RunReasonSuspended, "stopped", 1, t0)
	st.Phase = v1alpha1.RunRunning
	setConditions(&st, "", "", 2, t0.Add(time.Minute))
	want := []metav1.Condition{{Type: v1alpha1.RunConditionSuspended, Status: metav1.ConditionFalse, Reason: v1alpha1.RunReasonResumed,
		Message: "spec.suspend is false: the nodes resume from their journals", ObservedGeneration: 2, LastTransitionTime: *at(time.Minute)}}
	if diff := cmp.Diff(want, st.Conditions); diff != "" {
		t.Errorf("conditions after resume (-want +got):\n%s", diff)
	}
}

func objErr(node string, sec int) v1alpha1.ObjectError {
	return v1alpha1.ObjectError{Object: fmt.Sprintf("%s-%d", node, sec), Message: "bad", Node: node, Time: *at(time.Duration(sec) * time.Second)}
}

func TestRecentErrors(t *testing.T) {
	held := []v1alpha1.ObjectError{objErr("a", 1), objErr("b", 2)}
	fresh := map[string][]v1alpha1.ObjectError{"b": {objErr("", 3), objErr("", 0)}}
	want := []v1alpha1.ObjectError{objErr("b", 0), objErr("a", 1), objErr("b", 3)}
	want[0].Object, want[2].Object = "-0", "-3"
	if diff := cmp.Diff(want, recentErrors(held, fresh)); diff != "" {
		t.Errorf("recentErrors: a's held error stays, b's answer replaces b's (-want +got):\n%s", diff)
	}
	var many []v1alpha1.ObjectError
	for i := range 300 {
		many = append(many, objErr("", i))
	}
	got := recentErrors(nil, map[string][]v1alpha1.ObjectError{"a": many})
	if len(got) != v1alpha1.MaxRunErrors || got[0].Time != *at(172 * time.Second) {
		t.Errorf("kept %d errors from %v; want the latest %d", len(got), got[0].Time, v1alpha1.MaxRunErrors)
	}
}

func TestApplyObservation(t *testing.T) {
	grace := time.Minute
	seen := at(0)
	running := v1alpha1.RunNodeStatus{Node: "a", Phase: v1alpha1.RunRunning, LastSeen: seen, RunCounts: v1alpha1.RunCounts{DoneObjects: 3}}
	cases := map[string]struct {
		o         observation
		now       time.Duration
		suspended bool
		want      v1alpha1.RunNodeStatus
	}{
		"unreachable within the grace period: unchanged": {o: observation{err: fmt.Errorf("connection refused")}, now: grace, want: running},
		"unreachable past the grace period: failed, saying since when": {o: observation{err: fmt.Errorf("connection refused")}, now: grace + time.Second,
			want: v1alpha1.RunNodeStatus{Node: "a", Phase: v1alpha1.RunFailed, LastSeen: seen, RunCounts: running.RunCounts,
				Message: "node a's agent unreachable since 2026-01-01T12:00:00Z (grace period 1m0s): connection refused"}},
		"suspended: no grace runs out": {o: observation{err: fmt.Errorf("connection refused")}, now: time.Hour, suspended: true, want: running},
		"busy: waits, seen": {o: observation{busy: fmt.Errorf("429")}, now: time.Hour,
			want: v1alpha1.RunNodeStatus{Node: "a", Phase: v1alpha1.RunRunning, LastSeen: at(time.Hour), RunCounts: running.RunCounts, Message: "waiting for node a's agent: 429"}},
		"refused: failed": {o: observation{refused: fmt.Errorf("409 destination in use")}, now: time.Second,
			want: v1alpha1.RunNodeStatus{Node: "a", Phase: v1alpha1.RunFailed, LastSeen: at(time.Second), RunCounts: running.RunCounts, Message: "node a's agent refused the run: 409 destination in use"}},
		"stopped": {o: observation{stopped: true}, now: time.Second,
			want: v1alpha1.RunNodeStatus{Node: "a", Phase: v1alpha1.RunSuspended, LastSeen: at(time.Second), RunCounts: running.RunCounts}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := applyObservation(running, tc.o, t0.Add(tc.now), seen.Time, grace, tc.suspended)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("applyObservation (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnreachableSince(t *testing.T) {
	st := &v1alpha1.TransformRunStatus{StartTime: at(0), Conditions: []metav1.Condition{
		{Type: v1alpha1.RunConditionSuspended, Status: metav1.ConditionFalse, LastTransitionTime: *at(time.Hour)}}}
	n := v1alpha1.RunNodeStatus{Node: "a", LastSeen: at(time.Minute)}
	if got := unreachableSince(st, n); !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("since %v; want the resume, an hour in", got)
	}
	st.Conditions = nil
	if got := unreachableSince(st, n); !got.Equal(t0.Add(time.Minute)) {
		t.Errorf("since %v; want the last answer", got)
	}
	if got := unreachableSince(st, v1alpha1.RunNodeStatus{}); !got.Equal(t0) {
		t.Errorf("since %v; want the start for a node never seen", got)
	}
}

// withPhase is nodes, each in phase p.
func withPhase(nodes []v1alpha1.RunNodeStatus, p v1alpha1.RunPhase) []v1alpha1.RunNodeStatus {
	out := slices.Clone(nodes)
	for i := range out {
		out[i].Phase = p
	}
	return out
}
