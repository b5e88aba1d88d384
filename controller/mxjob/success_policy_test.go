package mxjob

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

func TestSuccessPolicyPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"local: the worker succeeded": {
			job: started(localJob(), time.Minute), pods: []corev1.Pod{pod(localJob(), "worker-0", corev1.PodSucceeded, exited(0, 0))},
			want: planWant{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", reason: "the worker succeeded"},
		},
		"dist: the scheduler succeeded": {
			job:  started(distJob(), time.Minute),
			pods: append(runningPods(distJob(), "scheduler-0"), pod(distJob(), "scheduler-0", corev1.PodSucceeded)),
			want: planWant{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", reason: "the scheduler succeeded"},
		},
		"AllWorkers: the scheduler's success is not enough": {
			job: func() *v1beta1.MxJob {
				j := started(distJob(), time.Minute)
				j.Spec.SuccessPolicy = v1beta1.SuccessPolicyAllWorkers
				return j
			}(),
			pods: append(runningPods(distJob(), "scheduler-0", "worker-0"), pod(distJob(), "scheduler-0", corev1.PodSucceeded), pod(distJob(), "worker-0", corev1.PodSucceeded)),
			want: planWant{state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running"},
		},
		"AllWorkers: every worker succeeded": {
			job: func() *v1beta1.MxJob {
				j := started(distJob(), time.Minute)
				j.Spec.SuccessPolicy = v1beta1.SuccessPolicyAllWorkers
				return j
			}(),
			pods: append(runningPods(distJob(), "worker-0", "worker-1"), pod(distJob(), "worker-0", corev1.PodSucceeded), pod(distJob(), "worker-1", corev1.PodSucceeded)),
			want: planWant{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", reason: "all 2 workers succeeded"},
		},
	})
}

func TestSucceeded(t *testing.T) {
	allWorkers := func() *v1beta1.MxJob {
		j := distJob()
		j.Spec.SuccessPolicy = v1beta1.SuccessPolicyAllWorkers
		return j
	}
	done := func(scheduler, workers int32) map[v1beta1.ReplicaType]*v1beta1.ReplicaStatus {
		return map[v1beta1.ReplicaType]*v1beta1.ReplicaStatus{
			v1beta1.ReplicaTypeScheduler: {Succeeded: scheduler},
			v1beta1.ReplicaTypeWorker:    {Succeeded: workers},
		}
	}
	cases := map[string]struct {
		job    *v1beta1.MxJob
		counts map[v1beta1.ReplicaType]*v1beta1.ReplicaStatus
		want   bool
		why    string
	}{
		"local: the worker succeeded":            {job: localJob(), counts: done(0, 1), want: true, why: "the worker succeeded"},
		"local: nothing counted yet":             {job: localJob()},
		"dist: the scheduler succeeded":          {job: distJob(), counts: done(1, 0), want: true, why: "the scheduler succeeded"},
		"dist: the workers alone are not enough": {job: distJob(), counts: done(0, 2)},
		"AllWorkers: one worker of two":          {job: allWorkers(), counts: done(1, 1)},
		"AllWorkers: every worker":               {job: allWorkers(), counts: done(0, 2), want: true, why: "all 2 workers succeeded"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, why := succeeded(tc.job, tc.counts)
			if got != tc.want || (tc.want && why != tc.why) {
				t.Errorf("succeeded = %v, %q; want %v, %q", got, why, tc.want, tc.why)
			}
		})
	}
}
