package mxjob

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// pod makes replica name's pod ("worker-1") in the given phase; opts edit it.
func pod(job *v1beta1.MxJob, name string, phase corev1.PodPhase, opts ...func(*corev1.Pod)) corev1.Pod {
	var r replica
	var typ string
	fmt.Sscanf(strings.Replace(name, "-", " ", 1), "%s %d", &typ, &r.Index)
	r.Type = v1beta1.ReplicaType(strings.ToUpper(typ))
	p := buildReplicaPod(job, r)
	p.UID = types.UID("uid-" + name)
	p.Status.Phase = phase
	for _, o := range opts {
		o(p)
	}
	return *p
}

// exited gives the mxnet container a terminated state with code, finished ago before now.
func exited(code int32, ago time.Duration) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mxnet", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(now.Add(-ago))}}}}
	}
}

func restarted(n int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mxnet", RestartCount: n}}
	}
}

// started marks the job as running since ago.
func started(job *v1beta1.MxJob, ago time.Duration) *v1beta1.MxJob {
	job.Status.StartTime = &metav1.Time{Time: now.Add(-ago)}
	meta.SetStatusCondition(&job.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionCreated, Status: metav1.ConditionTrue, Reason: "Test"})
	return job
}

// done marks the job finished ago with the given condition.
func done(job *v1beta1.MxJob, cond string, ago time.Duration) *v1beta1.MxJob {
	job.Status.State = v1beta1.StateSucceeded
	if cond == v1beta1.ConditionFailed {
		job.Status.State = v1beta1.StateFailed
	}
	job.Status.CompletionTime = &metav1.Time{Time: now.Add(-ago)}
	meta.SetStatusCondition(&job.Status.Conditions, metav1.Condition{Type: cond, Status: metav1.ConditionTrue, Reason: "Test"})
	return job
}

func services(job *v1beta1.MxJob) []corev1.Service {
	var out []corev1.Service
	for _, r := range replicasOf(job) {
		out = append(out, *buildReplicaService(job, r))
	}
	return out
}

func TestComputePlan(t *testing.T) {
	dist := func() *v1beta1.MxJob { return defaulted(builders.MxJob("j").Dist(1, 2)) }
	local := func() *v1beta1.MxJob { return defaulted(builders.MxJob("j").Local()) }
	withPolicy := func(p v1beta1.RestartPolicy) *v1beta1.MxJob {
		return defaulted(builders.MxJob("j").Dist(1, 2).EditReplica(2, func(rs *v1beta1.ReplicaSpec) { rs.RestartPolicy = p }))
	}
	running := func(job *v1beta1.MxJob, except ...string) []corev1.Pod {
		var pods []corev1.Pod
		for _, r := range replicasOf(job) {
			if !strings.Contains(strings.Join(except, ","), r.String()) {
				pods = append(pods, pod(job, r.String(), corev1.PodRunning))
			}
		}
		return pods
	}
	type want struct {
		createPods, deletePods []string
		state                  v1beta1.State
		phase                  v1beta1.Phase
		lastCondition          string
		reason                 string
		restarts               int32
		requeue                time.Duration
		deleteJob              bool
	}
	cases := map[string]struct {
		job      *v1beta1.MxJob
		pods     []corev1.Pod
		noSvc    bool
		want     want
		wantMore func(*testing.T, plan)
	}{
		"a new job creates every pod and Service": {
			job: dist(), noSvc: true,
			want: want{createPods: []string{"scheduler-0", "server-0", "worker-0", "worker-1"}, state: v1beta1.StateRunning,
				phase: v1beta1.PhaseCreating, lastCondition: "Created"},
			wantMore: func(t *testing.T, p plan) {
				if len(p.createServices) != 4 || p.status.StartTime == nil {
					t.Errorf("services %v start %v; want 4 Services and a start time", p.createServices, p.status.StartTime)
				}
			},
		},
		"every pod running": {
			job: started(dist(), time.Minute), pods: running(dist()),
			want: want{state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running"},
		},
		"a worker-only job is not done at once": {
			job: local(), pods: nil,
			want: want{createPods: []string{"worker-0"}, state: v1beta1.StateRunning, phase: v1beta1.PhaseCreating, lastCondition: "Created"},
		},
		"local: the worker succeeded": {
			job: started(local(), time.Minute), pods: []corev1.Pod{pod(local(), "worker-0", corev1.PodSucceeded, exited(0, 0))},
			want: want{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", reason: "the worker succeeded"},
		},
		"dist: the scheduler succeeded": {
			job:  started(dist(), time.Minute),
			pods: append(running(dist(), "scheduler-0"), pod(dist(), "scheduler-0", corev1.PodSucceeded)),
			want: want{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", reason: "the scheduler succeeded"},
		},
		"AllWorkers: the scheduler's success is not enough": {
			job: func() *v1beta1.MxJob {
				j := started(dist(), time.Minute)
				j.Spec.SuccessPolicy = v1beta1.SuccessPolicyAllWorkers
				return j
			}(),
			pods: append(running(dist(), "scheduler-0", "worker-0"), pod(dist(), "scheduler-0", corev1.PodSucceeded), pod(dist(), "worker-0", corev1.PodSucceeded)),
			want: want{state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running"},
		},
		"AllWorkers: every worker succeeded": {
			job: func() *v1beta1.MxJob {
				j := started(dist(), time.Minute)
				j.Spec.SuccessPolicy = v1beta1.SuccessPolicyAllWorkers
				return j
			}(),
			pods: append(running(dist(), "worker-0", "worker-1"), pod(dist(), "worker-0", corev1.PodSucceeded), pod(dist(), "worker-1", corev1.PodSucceeded)),
			want: want{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", reason: "all 2 workers succeeded"},
		},
		"Never: a failed worker fails the job, even beside a succeeded scheduler": {
			job:  started(dist(), time.Minute),
			pods: append(running(dist(), "scheduler-0", "worker-1"), pod(dist(), "scheduler-0", corev1.PodSucceeded), pod(dist(), "worker-1", corev1.PodFailed, exited(1, 0))),
			want: want{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", reason: "worker-1 failed: exit code 1 under restartPolicy Never"},
		},
		"ExitCode: 1-127 is permanent": {
			job:  started(withPolicy(v1beta1.RestartPolicyExitCode), time.Minute),
			pods: append(running(dist(), "worker-0"), pod(dist(), "worker-0", corev1.PodFailed, exited(3, 0))),
			want: want{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", reason: "worker-0 failed: exit code 3 is permanent"},
		},
		"ExitCode: 137 is counted and waits out its backoff": {
			job:  started(withPolicy(v1beta1.RestartPolicyExitCode), time.Minute),
			pods: append(running(dist(), "worker-0"), pod(dist(), "worker-0", corev1.PodFailed, exited(137, time.Second))),
			want: want{state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running", restarts: 1, requeue: 4 * time.Second},
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
				j := started(withPolicy(v1beta1.RestartPolicyExitCode), time.Minute)
				j.Status.Restarts, j.Status.RestartingPods = 1, []string{"uid-worker-0"}
				return j
			}(),
			pods: append(running(dist(), "worker-0"), pod(dist(), "worker-0", corev1.PodFailed, exited(137, 6*time.Second))),
			want: want{deletePods: []string{"j-worker-0"}, state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running", restarts: 1},
		},
		"a counted pod that is gone is forgotten, its replacement created": {
			job: func() *v1beta1.MxJob {
				j := started(withPolicy(v1beta1.RestartPolicyExitCode), time.Minute)
				j.Status.Restarts, j.Status.RestartingPods = 1, []string{"uid-worker-0"}
				return j
			}(),
			pods: running(dist(), "worker-0"),
			want: want{createPods: []string{"worker-0"}, state: v1beta1.StateRunning, phase: v1beta1.PhaseCreating, lastCondition: "Created", restarts: 1},
			wantMore: func(t *testing.T, p plan) {
				if p.status.RestartingPods != nil {
					t.Errorf("restartingPods %v; want none", p.status.RestartingPods)
				}
			},
		},
		"backoffLimit: recreations beyond it fail the job": {
			job: func() *v1beta1.MxJob {
				j := started(withPolicy(v1beta1.RestartPolicyExitCode), time.Minute)
				j.Spec.RunPolicy.BackoffLimit = ptrTo[int32](1)
				j.Status.Restarts, j.Status.RestartingPods = 1, []string{"uid-old"}
				return j
			}(),
			pods: append(running(dist(), "worker-1"), pod(dist(), "worker-1", corev1.PodFailed, exited(137, 0))),
			want: want{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", restarts: 2, reason: "2 restarts exceed runPolicy.backoffLimit 1"},
		},
		"backoffLimit: in-place container restarts count too": {
			job: func() *v1beta1.MxJob {
				j := started(withPolicy(v1beta1.RestartPolicyOnFailure), time.Minute)
				j.Spec.RunPolicy.BackoffLimit = ptrTo[int32](2)
				return j
			}(),
			pods: append(running(dist(), "worker-1"), pod(dist(), "worker-1", corev1.PodRunning, restarted(3))),
			want: want{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", reason: "3 restarts exceed runPolicy.backoffLimit 2"},
		},
		"activeDeadlineSeconds passed": {
			job: func() *v1beta1.MxJob {
				j := started(dist(), 100*time.Second)
				j.Spec.RunPolicy.ActiveDeadlineSeconds = ptrTo[int64](60)
				return j
			}(),
			pods: running(dist()),
			want: want{state: v1beta1.StateFailed, phase: v1beta1.PhaseFailed, lastCondition: "Failed", reason: "longer than runPolicy.activeDeadlineSeconds (60s)"},
		},
		"activeDeadlineSeconds not yet: requeue for it": {
			job: func() *v1beta1.MxJob {
				j := started(dist(), 10*time.Second)
				j.Spec.RunPolicy.ActiveDeadlineSeconds = ptrTo[int64](60)
				return j
			}(),
			pods: running(dist()),
			want: want{state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running", requeue: 50 * time.Second},
		},
		"a finished job never recreates a pod deleted by hand": {
			job:  done(started(dist(), time.Minute), v1beta1.ConditionSucceeded, time.Second),
			pods: []corev1.Pod{pod(dist(), "scheduler-0", corev1.PodSucceeded)},
			want: want{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded"},
		},
		"cleanPodPolicy Running deletes what still runs": {
			job:  done(started(dist(), time.Minute), v1beta1.ConditionSucceeded, time.Second),
			pods: append(running(dist(), "scheduler-0"), pod(dist(), "scheduler-0", corev1.PodSucceeded)),
			want: want{deletePods: []string{"j-server-0", "j-worker-0", "j-worker-1"}, state: v1beta1.StateSucceeded, phase: v1beta1.PhaseCleanUp, lastCondition: "Succeeded"},
		},
		"cleanPodPolicy All deletes every pod": {
			job: func() *v1beta1.MxJob {
				j := done(started(dist(), time.Minute), v1beta1.ConditionFailed, time.Second)
				j.Spec.RunPolicy.CleanPodPolicy = v1beta1.CleanPodPolicyAll
				return j
			}(),
			pods: append(running(dist(), "scheduler-0"), pod(dist(), "scheduler-0", corev1.PodSucceeded)),
			want: want{deletePods: []string{"j-server-0", "j-worker-0", "j-worker-1", "j-scheduler-0"}, state: v1beta1.StateFailed, phase: v1beta1.PhaseCleanUp, lastCondition: "Failed"},
		},
		"cleanPodPolicy None keeps them": {
			job: func() *v1beta1.MxJob {
				j := done(started(dist(), time.Minute), v1beta1.ConditionSucceeded, time.Second)
				j.Spec.RunPolicy.CleanPodPolicy = v1beta1.CleanPodPolicyNone
				return j
			}(),
			pods: running(dist()),
			want: want{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded"},
		},
		"ttlSecondsAfterFinished passed deletes the job": {
			job: func() *v1beta1.MxJob {
				j := done(started(dist(), time.Minute), v1beta1.ConditionSucceeded, 100*time.Second)
				j.Spec.RunPolicy.TTLSecondsAfterFinished = ptrTo[int32](60)
				return j
			}(),
			want: want{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", deleteJob: true},
		},
		"ttlSecondsAfterFinished not yet: requeue for it": {
			job: func() *v1beta1.MxJob {
				j := done(started(dist(), time.Minute), v1beta1.ConditionSucceeded, 10*time.Second)
				j.Spec.RunPolicy.TTLSecondsAfterFinished = ptrTo[int32](60)
				return j
			}(),
			want: want{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded", requeue: 50 * time.Second},
		},
		"suspend deletes the pods": {
			job: func() *v1beta1.MxJob {
				j := started(dist(), time.Minute)
				j.Spec.RunPolicy.Suspend = ptrTo(true)
				return j
			}(),
			pods: running(dist()),
			want: want{deletePods: []string{"j-scheduler-0", "j-server-0", "j-worker-0", "j-worker-1"}, state: v1beta1.StateSuspended, phase: v1beta1.PhaseCreating, lastCondition: "Suspended"},
			wantMore: func(t *testing.T, p plan) {
				if p.status.StartTime != nil {
					t.Error("a suspended job keeps its start time; activeDeadlineSeconds would count the pause")
				}
			},
		},
		"resume recreates the pods": {
			job: func() *v1beta1.MxJob {
				j := started(dist(), time.Minute)
				j.Status.StartTime = nil
				meta.SetStatusCondition(&j.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionSuspended, Status: metav1.ConditionTrue, Reason: "Suspended"})
				return j
			}(),
			want: want{createPods: []string{"scheduler-0", "server-0", "worker-0", "worker-1"}, state: v1beta1.StateRunning, phase: v1beta1.PhaseCreating, lastCondition: "Suspended"},
			wantMore: func(t *testing.T, p plan) {
				if meta.IsStatusConditionTrue(p.status.Conditions, v1beta1.ConditionSuspended) || p.status.StartTime == nil {
					t.Error("want Suspended=False and a fresh start time")
				}
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			svcs := services(tc.job)
			if tc.noSvc {
				svcs = nil
			}
			p := computePlan(tc.job, tc.pods, svcs, now)
			got := want{
				state: p.status.State, phase: p.status.Phase, restarts: p.status.Restarts,
				requeue: p.requeueAfter, deleteJob: p.deleteJob,
			}
			for _, r := range p.createPods {
				got.createPods = append(got.createPods, r.String())
			}
			for _, d := range p.deletePods {
				got.deletePods = append(got.deletePods, d.Name)
			}
			if n := len(p.status.Conditions); n > 0 {
				got.lastCondition = p.status.Conditions[n-1].Type
			}
			if !strings.Contains(p.status.Reason, tc.want.reason) {
				t.Errorf("reason %q does not contain %q", p.status.Reason, tc.want.reason)
			}
			got.reason = tc.want.reason
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if finished(&p.status) {
				if c := p.status.Conditions[len(p.status.Conditions)-1]; c.Type == v1beta1.ConditionRunning {
					t.Error("a finished job shows Running as its latest condition")
				}
				if meta.IsStatusConditionTrue(p.status.Conditions, v1beta1.ConditionRunning) {
					t.Error("a finished job still has Running=True")
				}
				if p.status.CompletionTime == nil || p.status.StartTime == nil {
					t.Error("a finished job lacks its start or completion time")
				}
			}
			if tc.wantMore != nil {
				tc.wantMore(t, p)
			}
		})
	}
}
