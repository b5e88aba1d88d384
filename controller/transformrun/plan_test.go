package transformrun

import (
	stdcmp "cmp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestComputePlan(t *testing.T) {
	every := timing{poll: 3 * time.Second, statusInterval: 2 * time.Second}
	counts := v1alpha1.RunCounts{PlannedObjects: 10, DoneObjects: 4}
	running := v1alpha1.TransformRunStatus{Phase: v1alpha1.RunRunning, StartTime: at(0),
		Nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunRunning, v1alpha1.RunCounts{PlannedObjects: 10, DoneObjects: 2})}}
	done := v1alpha1.TransformRunStatus{Phase: v1alpha1.RunSucceeded, StartTime: at(0), CompletionTime: at(0)}
	ttl := func(secs int32) v1alpha1.TransformRunSpec {
		return v1alpha1.TransformRunSpec{TTLSecondsAfterFinished: ptr.To(secs)}
	}
	type want struct {
		phase        v1alpha1.RunPhase
		writeStatus  bool
		deleteRun    bool
		requeueAfter time.Duration
	}
	cases := map[string]struct {
		run  *v1alpha1.TransformRun
		obs  observed
		want want
	}{
		"running, counts within the status interval: not written, polled again": {
			run:  runWith(v1alpha1.TransformRunSpec{}, running),
			obs:  observed{nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunRunning, counts)}, sinceWrite: time.Second},
			want: want{phase: v1alpha1.RunRunning, requeueAfter: every.poll},
		},
		"running, counts past the status interval: written": {
			run:  runWith(v1alpha1.TransformRunSpec{}, running),
			obs:  observed{nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunRunning, counts)}, sinceWrite: every.statusInterval},
			want: want{phase: v1alpha1.RunRunning, writeStatus: true, requeueAfter: every.poll},
		},
		"running, listed to its end, ending before the interval: polled again when it should end": {
			run: runWith(v1alpha1.TransformRunSpec{}, running),
			obs: observed{nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunRunning, v1alpha1.RunCounts{PlannedObjects: 10, DoneObjects: 8})},
				listed: map[string]bool{"a": true}, sinceWrite: time.Second},
			// 6 objects in the second since the last write; 2 left at 6 a second.
			want: want{phase: v1alpha1.RunRunning, requeueAfter: time.Second / 3},
		},
		"finished by this poll: written, then back after its TTL": {
			run:  runWith(ttl(60), running),
			obs:  observed{nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunSucceeded, v1alpha1.RunCounts{PlannedObjects: 10, DoneObjects: 10})}, sinceWrite: time.Second},
			want: want{phase: v1alpha1.RunSucceeded, writeStatus: true, requeueAfter: time.Minute},
		},
		"finished by this poll with a TTL of 0: written, then deleted": {
			run:  runWith(ttl(0), running),
			obs:  observed{nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunFailed, counts)}, sinceWrite: time.Second},
			want: want{phase: v1alpha1.RunFailed, writeStatus: true, deleteRun: true},
		},
		"finished by this poll without a TTL: written, then left": {
			run:  runWith(v1alpha1.TransformRunSpec{}, running),
			obs:  observed{nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunFailed, counts)}, sinceWrite: time.Second},
			want: want{phase: v1alpha1.RunFailed, writeStatus: true},
		},
		"finished before: not polled, back after its TTL": {
			run:  runWith(ttl(60), done),
			want: want{phase: v1alpha1.RunSucceeded, requeueAfter: 50 * time.Second},
		},
		"finished before, past its TTL: deleted": {
			run:  runWith(ttl(5), done),
			want: want{phase: v1alpha1.RunSucceeded, deleteRun: true},
		},
		"finished before, no TTL: left alone": {
			run:  runWith(v1alpha1.TransformRunSpec{}, done),
			want: want{phase: v1alpha1.RunSucceeded},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := tc.run.DeepCopy()
			p := computePlan(tc.run, tc.obs, t0.Add(10*time.Second), every)
			got := want{phase: p.status.Phase, writeStatus: p.writeStatus, deleteRun: p.deleteRun, requeueAfter: p.requeueAfter}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.run); diff != "" {
				t.Errorf("computePlan changed the run it was given (-before +after):\n%s", diff)
			}
			if !finished(tc.run.Status.Phase) && !cmp.Equal(p.status, computeStatus(tc.run, tc.obs.nodes, tc.obs.fresh, t0.Add(10*time.Second), tc.obs.sinceWrite)) {
				t.Error("the planned status of a polled run is not what its shares add up to")
			}
		})
	}
}

func TestNextPoll(t *testing.T) {
	const interval = 3 * time.Second
	running := func(name string, left, rate int64) v1alpha1.RunNodeStatus {
		n := node(name, v1alpha1.RunRunning, v1alpha1.RunCounts{PlannedObjects: 100, DoneObjects: 100 - left})
		n.ObjectsPerSecond = rate
		return n
	}
	all := map[string]bool{"a": true, "b": true}
	cases := map[string]struct {
		phase  v1alpha1.RunPhase
		nodes  []v1alpha1.RunNodeStatus
		listed map[string]bool
		recent map[string]float64
		want   time.Duration
	}{
		"one node, ends within the interval": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 10, 20)}, listed: all, want: interval / 6,
		},
		"the last node to end sets it": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 10, 20), running("b", 20, 10)}, listed: all, want: 2 * time.Second,
		},
		"a finished node does not count": {
			nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunSucceeded, allDone), running("b", 10, 20)}, listed: all, want: interval / 6,
		},
		"a share faster since the last poll than its smoothed rate: the faster": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 10, 2)}, listed: all, recent: map[string]float64{"a": 20}, want: interval / 6,
		},
		"a share slower since the last poll: its smoothed rate": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 10, 20)}, listed: all, recent: map[string]float64{"a": 1}, want: interval / 6,
		},
		"a rate since the last poll and none smoothed yet": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 10, 0)}, listed: all, recent: map[string]float64{"a": 20}, want: interval / 6,
		},
		"ends after the interval: the interval": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 100, 20)}, listed: all, want: interval,
		},
		"nothing left but still running: a tenth of the interval": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 0, 20)}, listed: all, want: interval / 10,
		},
		"a node still listing: its plan may grow, the interval": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 10, 20), running("b", 1, 20)}, listed: map[string]bool{"a": true}, want: interval,
		},
		"a node without a rate yet: the interval": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 10, 20), running("b", 1, 0)}, listed: all, want: interval,
		},
		"a node not started: the interval": {
			nodes: []v1alpha1.RunNodeStatus{running("a", 10, 20), node("b", v1alpha1.RunPending, v1alpha1.RunCounts{})}, listed: all, want: interval,
		},
		"a run not running: the interval": {
			phase: v1alpha1.RunSuspended, nodes: []v1alpha1.RunNodeStatus{running("a", 10, 20)}, listed: all, want: interval,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := v1alpha1.TransformRunStatus{Phase: stdcmp.Or(tc.phase, v1alpha1.RunRunning), Nodes: tc.nodes}
			if got := nextPoll(&st, tc.listed, tc.recent, interval); got != tc.want {
				t.Errorf("nextPoll = %v, want %v", got, tc.want)
			}
		})
	}
}
