package mxjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

func TestCleanPodPolicyPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"cleanPodPolicy Running deletes what still runs": {
			job:  done(started(distJob(), time.Minute), v1beta1.ConditionSucceeded, time.Second),
			pods: append(runningPods(distJob(), "scheduler-0"), pod(distJob(), "scheduler-0", corev1.PodSucceeded)),
			want: planWant{deletePods: []string{"j-server-0", "j-worker-0", "j-worker-1"}, state: v1beta1.StateSucceeded, phase: v1beta1.PhaseCleanUp, lastCondition: "Succeeded"},
		},
		"cleanPodPolicy All deletes every pod": {
			job: func() *v1beta1.MxJob {
				j := done(started(distJob(), time.Minute), v1beta1.ConditionFailed, time.Second)
				j.Spec.RunPolicy.CleanPodPolicy = v1beta1.CleanPodPolicyAll
				return j
			}(),
			pods: append(runningPods(distJob(), "scheduler-0"), pod(distJob(), "scheduler-0", corev1.PodSucceeded)),
			want: planWant{deletePods: []string{"j-server-0", "j-worker-0", "j-worker-1", "j-scheduler-0"}, state: v1beta1.StateFailed, phase: v1beta1.PhaseCleanUp, lastCondition: "Failed"},
		},
		"cleanPodPolicy None keeps them": {
			job: func() *v1beta1.MxJob {
				j := done(started(distJob(), time.Minute), v1beta1.ConditionSucceeded, time.Second)
				j.Spec.RunPolicy.CleanPodPolicy = v1beta1.CleanPodPolicyNone
				return j
			}(),
			pods: runningPods(distJob()),
			want: planWant{state: v1beta1.StateSucceeded, phase: v1beta1.PhaseDone, lastCondition: "Succeeded"},
		},
	})
}

func TestCleanUp(t *testing.T) {
	job := distJob()
	pods := []corev1.Pod{
		pod(job, "scheduler-0", corev1.PodSucceeded),
		pod(job, "server-0", corev1.PodRunning),
		pod(job, "worker-0", corev1.PodRunning),
		pod(job, "worker-1", corev1.PodFailed),
	}
	type want struct {
		deletePods, deleteServices []string
		phase                      v1beta1.Phase
		active                     map[v1beta1.ReplicaType]int32
	}
	noneActive := map[v1beta1.ReplicaType]int32{v1beta1.ReplicaTypeScheduler: 0, v1beta1.ReplicaTypeServer: 0, v1beta1.ReplicaTypeWorker: 0}
	cases := map[string]struct {
		policy v1beta1.CleanPodPolicy
		state  v1beta1.State
		pods   []corev1.Pod
		want   want
	}{
		"Running: the running pods and their Services go": {policy: v1beta1.CleanPodPolicyRunning, state: v1beta1.StateSucceeded, pods: pods,
			want: want{deletePods: []string{"j-server-0", "j-worker-0"}, deleteServices: []string{"j-server-0", "j-worker-0"}, phase: v1beta1.PhaseCleanUp, active: noneActive}},
		"All: every pod and Service goes": {policy: v1beta1.CleanPodPolicyAll, state: v1beta1.StateFailed, pods: pods,
			want: want{deletePods: []string{"j-scheduler-0", "j-server-0", "j-worker-0", "j-worker-1"},
				deleteServices: []string{"j-scheduler-0", "j-server-0", "j-worker-0", "j-worker-1"}, phase: v1beta1.PhaseCleanUp, active: noneActive}},
		"All: Services whose pods are gone go too": {policy: v1beta1.CleanPodPolicyAll, state: v1beta1.StateSucceeded,
			want: want{deleteServices: []string{"j-scheduler-0", "j-server-0", "j-worker-0", "j-worker-1"}, phase: v1beta1.PhaseDone, active: noneActive}},
		"None: what runs is kept and counted active": {policy: v1beta1.CleanPodPolicyNone, state: v1beta1.StateSucceeded, pods: pods,
			want: want{phase: v1beta1.PhaseDone, active: map[v1beta1.ReplicaType]int32{v1beta1.ReplicaTypeScheduler: 0, v1beta1.ReplicaTypeServer: 1, v1beta1.ReplicaTypeWorker: 1}}},
		"None: a failed job's phase is Failed": {policy: v1beta1.CleanPodPolicyNone, state: v1beta1.StateFailed,
			want: want{phase: v1beta1.PhaseFailed, active: noneActive}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := done(started(distJob(), time.Minute), v1beta1.ConditionSucceeded, time.Second)
			j.Spec.RunPolicy.CleanPodPolicy = tc.policy
			j.Status.State = tc.state
			j.Status.ReplicaStatuses = map[v1beta1.ReplicaType]*v1beta1.ReplicaStatus{
				v1beta1.ReplicaTypeScheduler: {Active: 1}, v1beta1.ReplicaTypeServer: {Active: 1}, v1beta1.ReplicaTypeWorker: {Active: 2},
			}
			p := plan{status: *j.Status.DeepCopy()}
			cleanUp(j, clonePods(tc.pods), services(j), &p)
			got := want{deleteServices: p.deleteServices, phase: p.status.Phase, active: map[v1beta1.ReplicaType]int32{}}
			for _, d := range p.deletePods {
				got.deletePods = append(got.deletePods, d.Name)
			}
			for typ, c := range p.status.ReplicaStatuses {
				got.active[typ] = c.Active
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("cleanUp (-want +got):\n%s", diff)
			}
		})
	}
}
