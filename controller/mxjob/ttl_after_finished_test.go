package mxjob

import (
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

func TestTTLAfterFinishedPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"ttlSecondsAfterFinished passed deletes the job": {
			job: func() *v1beta1.MxJob {
				j := done(started(distJob(), time.Minute), v1beta1.ConditionSucceeded, 100*time.Second)
				j.Spec.RunPolicy.TTLSecondsAfterFinished = ptrTo[int32](60)
				return j
			}(),
			want: planWant{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", deleteJob: true},
		},
		"ttlSecondsAfterFinished not yet: requeue for it": {
			job: func() *v1beta1.MxJob {
				j := done(started(distJob(), time.Minute), v1beta1.ConditionSucceeded, 10*time.Second)
				j.Spec.RunPolicy.TTLSecondsAfterFinished = ptrTo[int32](60)
				return j
			}(),
			want: planWant{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", requeue: 50 * time.Second},
		},
	})
}

func TestTTLAfterFinished(t *testing.T) {
	cases := map[string]struct {
		ttl         *int32
		finishedAgo time.Duration
		wantDelete  bool
		wantRequeue time.Duration
	}{
		"no TTL: the job stays":  {finishedAgo: time.Hour},
		"not yet: come back":     {ttl: ptrTo[int32](60), finishedAgo: 10 * time.Second, wantRequeue: 50 * time.Second},
		"exactly at it: delete":  {ttl: ptrTo[int32](60), finishedAgo: time.Minute, wantDelete: true},
		"past it: delete":        {ttl: ptrTo[int32](60), finishedAgo: 100 * time.Second, wantDelete: true},
		"a TTL of 0: delete now": {ttl: ptrTo[int32](0), wantDelete: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := done(started(distJob(), time.Hour), v1beta1.ConditionSucceeded, tc.finishedAgo)
			job.Spec.RunPolicy.TTLSecondsAfterFinished = tc.ttl
			p := plan{status: *job.Status.DeepCopy()}
			ttlAfterFinished(job, &p, now)
			if p.deleteJob != tc.wantDelete || p.requeueAfter != tc.wantRequeue {
				t.Errorf("delete %v, requeue %v; want %v, %v", p.deleteJob, p.requeueAfter, tc.wantDelete, tc.wantRequeue)
			}
		})
	}
}

// TestRequeueForTTL: a job finishing now is never deleted in the same reconcile, only revisited.
func TestRequeueForTTL(t *testing.T) {
	cases := map[string]struct {
		ttl  *int32
		want time.Duration
	}{
		"no TTL":        {},
		"after the TTL": {ttl: ptrTo[int32](60), want: time.Minute},
		"a TTL of 0 still waits for the next reconcile": {ttl: ptrTo[int32](0), want: time.Second},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := distJob()
			job.Spec.RunPolicy.TTLSecondsAfterFinished = tc.ttl
			var p plan
			requeueForTTL(job, &p)
			if p.deleteJob || p.requeueAfter != tc.want {
				t.Errorf("delete %v, requeue %v; want no deletion, %v", p.deleteJob, p.requeueAfter, tc.want)
			}
		})
	}
}
