package transformrun

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestTTLLeft(t *testing.T) {
	done := v1alpha1.TransformRunStatus{Phase: v1alpha1.RunSucceeded, CompletionTime: at(0)}
	cases := map[string]struct {
		run    *v1alpha1.TransformRun
		want   time.Duration
		wantOK bool
	}{
		"no TTL":          {run: runWith(v1alpha1.TransformRunSpec{}, done)},
		"running":         {run: runWith(v1alpha1.TransformRunSpec{TTLSecondsAfterFinished: ptr.To[int32](60)}, v1alpha1.TransformRunStatus{Phase: v1alpha1.RunRunning})},
		"finished, waits": {run: runWith(v1alpha1.TransformRunSpec{TTLSecondsAfterFinished: ptr.To[int32](60)}, done), want: 50 * time.Second, wantOK: true},
		"past its TTL":    {run: runWith(v1alpha1.TransformRunSpec{TTLSecondsAfterFinished: ptr.To[int32](0)}, done), want: -10 * time.Second, wantOK: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := ttlLeft(tc.run.Spec.TTLSecondsAfterFinished, &tc.run.Status, t0.Add(10*time.Second))
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("ttlLeft = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestTTLAfterFinished(t *testing.T) {
	done := v1alpha1.TransformRunStatus{Phase: v1alpha1.RunFailed, CompletionTime: at(0)}
	cases := map[string]struct {
		ttl         *int32
		status      v1alpha1.TransformRunStatus
		wantDelete  bool
		wantRequeue time.Duration
	}{
		"no TTL: the run stays":       {status: done},
		"not finished: nothing to do": {ttl: ptr.To[int32](0), status: v1alpha1.TransformRunStatus{Phase: v1alpha1.RunRunning}},
		"within its TTL: come back":   {ttl: ptr.To[int32](60), status: done, wantRequeue: 50 * time.Second},
		"exactly at its TTL: deleted": {ttl: ptr.To[int32](10), status: done, wantDelete: true},
		"past its TTL: deleted":       {ttl: ptr.To[int32](0), status: done, wantDelete: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := plan{status: tc.status}
			ttlAfterFinished(tc.ttl, &p, t0.Add(10*time.Second))
			if p.deleteRun != tc.wantDelete || p.requeueAfter != tc.wantRequeue {
				t.Errorf("delete %v, requeue %v; want %v, %v", p.deleteRun, p.requeueAfter, tc.wantDelete, tc.wantRequeue)
			}
		})
	}
}
