package transformrun

import (
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
