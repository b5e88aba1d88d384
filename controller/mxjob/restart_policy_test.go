package mxjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/internal/owned"
)

func TestRestartPolicyPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"Never: a failed worker fails the job, even beside a succeeded scheduler": {
			job:  started(distJob(), time.Minute),
			pods: append(runningPods(distJob(), "scheduler-0", "worker-1"), pod(distJob(), "scheduler-0", corev1.PodSucceeded), pod(distJob(), "worker-1", corev1.PodFailed, exited(1, 0))),
			want: planWant{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", reason: "worker-1 failed: exit code 1 under restartPolicy Never"},
		},
		"ExitCode: 1-127 is permanent": {
			job:  started(withRestartPolicy(v1beta1.RestartPolicyExitCode), time.Minute),
			pods: append(runningPods(distJob(), "worker-0"), pod(distJob(), "worker-0", corev1.PodFailed, exited(3, 0))),
			want: planWant{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", reason: "worker-0 failed: exit code 3 is permanent"},
		},
		"ExitCode: 137 is counted and waits out its backoff": {
			job:  started(withRestartPolicy(v1beta1.RestartPolicyExitCode), time.Minute),
			pods: append(runningPods(distJob(), "worker-0"), pod(distJob(), "worker-0", corev1.PodFailed, exited(137, time.Second))),
			want: planWant{state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running", restarts: 1, requeue: 4 * time.Second},
			wantMore: func(t *testing.T, p plan) {
				if !meta.IsStatusConditionTrue(p.status.Conditions, v1beta1.ConditionRestarting) {
					t.Error("want Restarting=True")
				}
				if diff := cmp.Diff([]string{"uid-worker-0"}, p.status.RestartingPods); diff != "" {
					t.Errorf("restartingPods (-want +got):\n%s", diff)
				}
			},
		},
		"ExitCode: after its backoff the failed pod is deleted, counted once": {
			job: func() *v1beta1.MxJob {
				j := started(withRestartPolicy(v1beta1.RestartPolicyExitCode), time.Minute)
				j.Status.Restarts, j.Status.RestartingPods = 1, []string{"uid-worker-0"}
				return j
			}(),
			pods: append(runningPods(distJob(), "worker-0"), pod(distJob(), "worker-0", corev1.PodFailed, exited(137, 6*time.Second))),
			want: planWant{deletePods: []string{"j-worker-0"}, state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running", restarts: 1},
		},
		"a counted pod that is gone is forgotten, its replacement created": {
			job: func() *v1beta1.MxJob {
				j := started(withRestartPolicy(v1beta1.RestartPolicyExitCode), time.Minute)
				j.Status.Restarts, j.Status.RestartingPods = 1, []string{"uid-worker-0"}
				return j
			}(),
			pods: runningPods(distJob(), "worker-0"),
			want: planWant{createPods: []string{"worker-0"}, state: v1beta1.StateRunning, phase: v1beta1.PhaseCreating, lastCondition: "Created", restarts: 1},
			wantMore: func(t *testing.T, p plan) {
				if p.status.RestartingPods != nil {
					t.Errorf("restartingPods %v; want none", p.status.RestartingPods)
				}
			},
		},
	})
}

func TestPermanentFailure(t *testing.T) {
	cases := map[string]struct {
		policy v1beta1.RestartPolicy
		code   int32
		want   bool
		why    string
	}{
		"Never: any exit":                      {policy: v1beta1.RestartPolicyNever, code: 137, want: true, why: "exit code 137 under restartPolicy Never"},
		"unset is Never":                       {code: 1, want: true, why: "exit code 1 under restartPolicy Never"},
		"ExitCode: 1 is the program's verdict": {policy: v1beta1.RestartPolicyExitCode, code: 1, want: true, why: "exit code 1 is permanent under restartPolicy ExitCode (1-127)"},
		"ExitCode: 127 too":                    {policy: v1beta1.RestartPolicyExitCode, code: 127, want: true, why: "exit code 127 is permanent under restartPolicy ExitCode (1-127)"},
		"ExitCode: 128+ is a signal":           {policy: v1beta1.RestartPolicyExitCode, code: 137},
		"ExitCode: no container terminated":    {policy: v1beta1.RestartPolicyExitCode, code: -1},
		"OnFailure retries":                    {policy: v1beta1.RestartPolicyOnFailure, code: 1},
		"Always retries":                       {policy: v1beta1.RestartPolicyAlways, code: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, why := permanentFailure(tc.policy, tc.code)
			if got != tc.want || why != tc.why {
				t.Errorf("permanentFailure = %v, %q; want %v, %q", got, why, tc.want, tc.why)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	terminated := func(name string, code int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}
	}
	cases := map[string]struct {
		statuses []corev1.ContainerStatus
		want     int32
	}{
		"the mxnet container's code wins":  {statuses: []corev1.ContainerStatus{terminated("sidecar", 2), terminated("mxnet", 3)}, want: 3},
		"else the first non-zero one":      {statuses: []corev1.ContainerStatus{terminated("a", 0), terminated("b", 2), terminated("c", 4)}, want: 2},
		"none terminated: evicted or lost": {statuses: []corev1.ContainerStatus{{Name: "mxnet"}}, want: -1},
		"no container statuses at all":     {want: -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: tc.statuses}}
			if got := exitCode(pod); got != tc.want {
				t.Errorf("exitCode = %d; want %d", got, tc.want)
			}
		})
	}
}

func TestRetryFailedPod(t *testing.T) {
	job := started(withRestartPolicy(v1beta1.RestartPolicyExitCode), time.Minute)
	r := replica{Type: v1beta1.ReplicaTypeWorker}
	cases := map[string]struct {
		failedAgo   time.Duration
		deleting    bool
		wantDeleted bool
		wantRequeue time.Duration
	}{
		"within its backoff: wait":           {failedAgo: time.Second, wantRequeue: owned.Backoff(1) - time.Second},
		"past its backoff: delete":           {failedAgo: owned.Backoff(1), wantDeleted: true},
		"past its backoff, already deleting": {failedAgo: owned.Backoff(1), deleting: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			failed := pod(job, "worker-0", corev1.PodFailed, exited(137, tc.failedAgo))
			if tc.deleting {
				failed.DeletionTimestamp = &metav1.Time{Time: now}
			}
			p := plan{status: *job.Status.DeepCopy()}
			// Every reconcile until the pod goes sees it again: it is counted once.
			retryFailedPod(&failed, r, 137, &p, now)
			retryFailedPod(&failed, r, 137, &p, now)
			if p.status.Restarts != 1 || len(p.events) != 1 {
				t.Errorf("restarts %d with %d events; want the pod counted once", p.status.Restarts, len(p.events))
			}
			if diff := cmp.Diff([]string{"uid-worker-0"}, p.status.RestartingPods); diff != "" {
				t.Errorf("restartingPods (-want +got):\n%s", diff)
			}
			if deleted := len(p.deletePods) > 0; deleted != tc.wantDeleted || p.requeueAfter != tc.wantRequeue {
				t.Errorf("deleted %v, requeue %v; want %v, %v", deleted, p.requeueAfter, tc.wantDeleted, tc.wantRequeue)
			}
		})
	}
}

func TestPruneRestartingPods(t *testing.T) {
	job := distJob()
	cases := map[string]struct {
		counted []string
		pods    []corev1.Pod
		want    []string
	}{
		"a counted pod still there stays": {counted: []string{"uid-worker-0", "uid-gone"},
			pods: []corev1.Pod{pod(job, "worker-0", corev1.PodFailed)}, want: []string{"uid-worker-0"}},
		"none left is nil, not empty": {counted: []string{"uid-gone"}, pods: runningPods(job, "worker-0")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := v1beta1.MxJobStatus{RestartingPods: tc.counted}
			pruneRestartingPods(&st, tc.pods)
			if diff := cmp.Diff(tc.want, st.RestartingPods); diff != "" {
				t.Errorf("restartingPods (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFailureTime(t *testing.T) {
	finishedAt := func(ago time.Duration) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now.Add(-ago))}}}
	}
	cases := map[string]struct {
		status corev1.PodStatus
		want   time.Time
	}{
		"the last termination": {status: corev1.PodStatus{StartTime: &metav1.Time{Time: now.Add(-time.Hour)},
			ContainerStatuses: []corev1.ContainerStatus{finishedAt(time.Minute), finishedAt(time.Second), {}}}, want: now.Add(-time.Second)},
		"else the pod's start": {status: corev1.PodStatus{StartTime: &metav1.Time{Time: now.Add(-time.Hour)}}, want: now.Add(-time.Hour)},
		"else nothing":         {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := failureTime(&corev1.Pod{Status: tc.status}); !got.Equal(tc.want) {
				t.Errorf("failureTime = %v; want %v", got, tc.want)
			}
		})
	}
}
