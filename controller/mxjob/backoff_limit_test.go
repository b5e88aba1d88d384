package mxjob

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

func TestBackoffLimitPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"backoffLimit: recreations beyond it fail the job": {
			job: func() *v1beta1.MxJob {
				j := started(withRestartPolicy(v1beta1.RestartPolicyExitCode), time.Minute)
				j.Spec.RunPolicy.BackoffLimit = ptrTo[int32](1)
				j.Status.Restarts, j.Status.RestartingPods = 1, []string{"uid-old"}
				return j
			}(),
			pods: append(runningPods(distJob(), "worker-1"), pod(distJob(), "worker-1", corev1.PodFailed, exited(137, 0))),
			want: planWant{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", restarts: 2, reason: "2 restarts exceed runPolicy.backoffLimit 1"},
		},
		"backoffLimit: in-place container restarts count too": {
			job: func() *v1beta1.MxJob {
				j := started(withRestartPolicy(v1beta1.RestartPolicyOnFailure), time.Minute)
				j.Spec.RunPolicy.BackoffLimit = ptrTo[int32](2)
				return j
			}(),
			pods: append(runningPods(distJob(), "worker-1"), pod(distJob(), "worker-1", corev1.PodRunning, restarted(3))),
			want: planWant{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", reason: "3 restarts exceed runPolicy.backoffLimit 2"},
		},
	})
}

func TestBackoffLimitExceeded(t *testing.T) {
	cases := map[string]struct {
		limit    *int32
		restarts int32
		want     bool
		why      string
	}{
		"no limit":                             {restarts: 1000},
		"at the limit":                         {limit: ptrTo[int32](2), restarts: 2},
		"beyond the limit":                     {limit: ptrTo[int32](2), restarts: 3, want: true, why: "3 restarts exceed runPolicy.backoffLimit 2"},
		"a limit of 0 fails the first restart": {limit: ptrTo[int32](0), restarts: 1, want: true, why: "1 restarts exceed runPolicy.backoffLimit 0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := distJob()
			job.Spec.RunPolicy.BackoffLimit = tc.limit
			got, why := backoffLimitExceeded(job, tc.restarts)
			if got != tc.want || why != tc.why {
				t.Errorf("backoffLimitExceeded = %v, %q; want %v, %q", got, why, tc.want, tc.why)
			}
		})
	}
}
