package mxjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

func TestSuspendPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"suspend deletes the pods": {
			job: func() *v1beta1.MxJob {
				j := started(distJob(), time.Minute)
				j.Spec.RunPolicy.Suspend = ptrTo(true)
				return j
			}(),
			pods: runningPods(distJob()),
			want: planWant{deletePods: []string{"j-scheduler-0", "j-server-0", "j-worker-0", "j-worker-1"}, state: v1beta1.StateSuspended, phase: v1beta1.PhaseCreating, lastCondition: "Suspended"},
			wantMore: func(t *testing.T, p plan) {
				if p.status.StartTime != nil {
					t.Error("a suspended job keeps its start time; activeDeadlineSeconds would count the pause")
				}
			},
		},
		"resume recreates the pods": {
			job: func() *v1beta1.MxJob {
				j := started(distJob(), time.Minute)
				j.Status.StartTime = nil
				meta.SetStatusCondition(&j.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionSuspended, Status: metav1.ConditionTrue, Reason: "Suspended"})
				return j
			}(),
			want: planWant{createPods: []string{"scheduler-0", "server-0", "worker-0", "worker-1"}, state: v1beta1.StateRunning, phase: v1beta1.PhaseCreating, lastCondition: "Suspended"},
			wantMore: func(t *testing.T, p plan) {
				if meta.IsStatusConditionTrue(p.status.Conditions, v1beta1.ConditionSuspended) || p.status.StartTime == nil {
					t.Error("want Suspended=False and a fresh start time")
				}
			},
		},
	})
}

func TestSuspend(t *testing.T) {
	condition := func(typ string, status metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "Test"}
	}
	cases := map[string]struct {
		conditions  []metav1.Condition
		deleting    string
		wantDeleted []string
		// wantConditions are the conditions' types and statuses after, in order.
		wantConditions map[string]metav1.ConditionStatus
	}{
		"a running job: Running turns False": {
			conditions:     []metav1.Condition{condition(v1beta1.ConditionRunning, metav1.ConditionTrue)},
			wantDeleted:    []string{"j-scheduler-0", "j-server-0", "j-worker-0", "j-worker-1"},
			wantConditions: map[string]metav1.ConditionStatus{v1beta1.ConditionRunning: metav1.ConditionFalse, v1beta1.ConditionSuspended: metav1.ConditionTrue},
		},
		"a job that never ran gains no Running": {
			wantDeleted:    []string{"j-scheduler-0", "j-server-0", "j-worker-0", "j-worker-1"},
			wantConditions: map[string]metav1.ConditionStatus{v1beta1.ConditionSuspended: metav1.ConditionTrue},
		},
		"a pod already being deleted is not deleted again": {
			deleting:       "worker-1",
			wantDeleted:    []string{"j-scheduler-0", "j-server-0", "j-worker-0"},
			wantConditions: map[string]metav1.ConditionStatus{v1beta1.ConditionSuspended: metav1.ConditionTrue},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := started(distJob(), time.Minute)
			job.Status.Conditions = tc.conditions
			job.Status.ReplicaStatuses = map[v1beta1.ReplicaType]*v1beta1.ReplicaStatus{v1beta1.ReplicaTypeWorker: {Active: 2}}
			pods := runningPods(job)
			for i := range pods {
				if pods[i].Name == "j-"+tc.deleting {
					pods[i].DeletionTimestamp = &metav1.Time{Time: now}
				}
			}
			p := plan{status: *job.Status.DeepCopy()}
			suspend(pods, &p, now)
			var deleted []string
			for _, d := range p.deletePods {
				deleted = append(deleted, d.Name)
			}
			if diff := cmp.Diff(tc.wantDeleted, deleted); diff != "" {
				t.Errorf("deleted pods (-want +got):\n%s", diff)
			}
			got := map[string]metav1.ConditionStatus{}
			for _, c := range p.status.Conditions {
				got[c.Type] = c.Status
			}
			if diff := cmp.Diff(tc.wantConditions, got); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			st := p.status
			if st.State != v1beta1.StateSuspended || st.Phase != v1beta1.PhaseCreating || st.StartTime != nil || st.ReplicaStatuses[v1beta1.ReplicaTypeWorker].Active != 0 {
				t.Errorf("state %q phase %q start %v active %d; want Suspended, Creating, no start time (activeDeadlineSeconds counts from the resume), none active",
					st.State, st.Phase, st.StartTime, st.ReplicaStatuses[v1beta1.ReplicaTypeWorker].Active)
			}
		})
	}
}

func TestResume(t *testing.T) {
	cases := map[string]struct {
		suspended *metav1.ConditionStatus
		want      *metav1.ConditionStatus
	}{
		"a suspended job: Suspended turns False": {suspended: ptrTo(metav1.ConditionTrue), want: ptrTo(metav1.ConditionFalse)},
		"already resumed: stays False":           {suspended: ptrTo(metav1.ConditionFalse), want: ptrTo(metav1.ConditionFalse)},
		"never suspended: no condition appears":  {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var st v1beta1.MxJobStatus
			if tc.suspended != nil {
				meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1beta1.ConditionSuspended, Status: *tc.suspended, Reason: "Test"})
			}
			resume(&st, now)
			c := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionSuspended)
			switch {
			case tc.want == nil && c != nil:
				t.Errorf("Suspended=%s; want no condition", c.Status)
			case tc.want != nil && (c == nil || c.Status != *tc.want):
				t.Errorf("Suspended %+v; want %s", c, *tc.want)
			}
		})
	}
}
