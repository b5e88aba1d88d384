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
	p := podOf(job, r)
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

// distJob is a dist job of one server and two workers, localJob a local one, as stored.
func distJob() *v1beta1.MxJob  { return defaulted(builders.MxJob("j").Dist(1, 2)) }
func localJob() *v1beta1.MxJob { return defaulted(builders.MxJob("j").Local()) }

// withRestartPolicy is distJob with its workers under restartPolicy p.
func withRestartPolicy(p v1beta1.RestartPolicy) *v1beta1.MxJob {
	return defaulted(builders.MxJob("j").Dist(1, 2).EditReplica(2, func(rs *v1beta1.ReplicaSpec) { rs.RestartPolicy = p }))
}

// runningPods are the job's pods, every one running, but for the replicas named in except.
func runningPods(job *v1beta1.MxJob, except ...string) []corev1.Pod {
	var pods []corev1.Pod
	for _, r := range replicasOf(job) {
		if !strings.Contains(strings.Join(except, ","), r.String()) {
			pods = append(pods, pod(job, r.String(), corev1.PodRunning))
		}
	}
	return pods
}

// planWant is what a test checks of a plan; reason need only be contained in status.reason.
type planWant struct {
	createPods, deletePods []string
	state                  v1beta1.State
	phase                  v1beta1.Phase
	lastCondition          string
	reason                 string
	restarts               int32
	requeue                time.Duration
	deleteJob              bool
}

// planCase is one reconcile's inputs (the job's Services unless noSvc) and its plan's wants.
type planCase struct {
	job      *v1beta1.MxJob
	pods     []corev1.Pod
	noSvc    bool
	want     planWant
	wantMore func(*testing.T, plan)
}

// testPlans runs each case through computePlan: each policy's tests drive it as the reconciler
// does, and every plan is also held to what any finished job must show.
func testPlans(t *testing.T, cases map[string]planCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			svcs := services(tc.job)
			if tc.noSvc {
				svcs = nil
			}
			p := computePlan(tc.job, tc.pods, svcs, now)
			got := planWant{
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
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(planWant{})); diff != "" {
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

// TestComputePlan holds what no single policy decides: creating the replicas, running, and a
// finished job staying finished. Each policy's cases are in its own file's test.
func TestComputePlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"a new job creates every pod and Service": {
			job: distJob(), noSvc: true,
			want: planWant{createPods: []string{"scheduler-0", "server-0", "worker-0", "worker-1"}, state: v1beta1.StateRunning,
				phase: v1beta1.PhaseCreating, lastCondition: "Created"},
			wantMore: func(t *testing.T, p plan) {
				if len(p.createServices) != 4 || p.status.StartTime == nil {
					t.Errorf("services %v start %v; want 4 Services and a start time", p.createServices, p.status.StartTime)
				}
			},
		},
		"every pod running": {
			job: started(distJob(), time.Minute), pods: runningPods(distJob()),
			want: planWant{state: v1beta1.StateRunning, phase: v1beta1.PhaseRunning, lastCondition: "Running"},
		},
		"a worker-only job is not done at once": {
			job: localJob(), pods: nil,
			want: planWant{createPods: []string{"worker-0"}, state: v1beta1.StateRunning, phase: v1beta1.PhaseCreating, lastCondition: "Created"},
		},
		"a finished job never recreates a pod deleted by hand": {
			job:  done(started(distJob(), time.Minute), v1beta1.ConditionSucceeded, time.Second),
			pods: []corev1.Pod{pod(distJob(), "scheduler-0", corev1.PodSucceeded)},
			want: planWant{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded"},
		},
	})
}
