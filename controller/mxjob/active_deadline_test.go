package mxjob

import (
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

func TestActiveDeadlinePlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"activeDeadlineSeconds passed": {
			job: func() *v1beta1.MxJob {
				j := started(distJob(), 100*time.Second)
				j.Spec.RunPolicy.ActiveDeadlineSeconds = ptrTo[int64](60)
				return j
			}(),
			pods: runningPods(distJob()),
			want: planWant{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", reason: "longer than runPolicy.activeDeadlineSeconds (60s)"},
		},
		"activeDeadlineSeconds not yet: requeue for it": {
			job: func() *v1beta1.MxJob {
				j := started(distJob(), 10*time.Second)
				j.Spec.RunPolicy.ActiveDeadlineSeconds = ptrTo[int64](60)
				return j
			}(),
			pods: runningPods(distJob()),
			want: planWant{state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running", requeue: 50 * time.Second},
		},
	})
}

func TestActiveDeadline(t *testing.T) {
	cases := map[string]struct {
		secs     *int64
		ran      time.Duration
		exceeded bool
		why      string
		left     time.Duration
	}{
		"no deadline":   {ran: time.Hour},
		"not yet":       {secs: ptrTo[int64](60), ran: 10 * time.Second, left: 50 * time.Second},
		"exactly at it": {secs: ptrTo[int64](60), ran: time.Minute, exceeded: true, why: "the job ran longer than runPolicy.activeDeadlineSeconds (60s)"},
		"past it":       {secs: ptrTo[int64](60), ran: 100 * time.Second, exceeded: true, why: "the job ran longer than runPolicy.activeDeadlineSeconds (60s)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := distJob()
			job.Spec.RunPolicy.ActiveDeadlineSeconds = tc.secs
			exceeded, why, left := activeDeadline(job, now.Add(-tc.ran), now)
			if exceeded != tc.exceeded || why != tc.why || left != tc.left {
				t.Errorf("activeDeadline = %v, %q, %v; want %v, %q, %v", exceeded, why, left, tc.exceeded, tc.why, tc.left)
			}
		})
	}
}
