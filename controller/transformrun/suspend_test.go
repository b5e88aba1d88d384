package transformrun

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestSuspendRunPhase(t *testing.T) {
	testRunPhases(t, map[string]runPhaseCase{
		"suspended": {spec: v1alpha1.TransformRunSpec{Suspend: true}, nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunSuspended, allDone)}, want: v1alpha1.RunSuspended, wantReason: v1alpha1.RunReasonSuspended},
		"suspending, a node still stopping": {spec: v1alpha1.TransformRunSpec{Suspend: true},
			nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunSuspended, allDone), node("b", v1alpha1.RunRunning, allDone)}, want: v1alpha1.RunRunning},
		"suspended before start": {spec: v1alpha1.TransformRunSpec{Suspend: true}, want: v1alpha1.RunSuspended, wantReason: v1alpha1.RunReasonSuspended},
		"finished before the suspension reached it": {spec: v1alpha1.TransformRunSpec{Suspend: true},
			nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunSucceeded, allDone)}, want: v1alpha1.RunSucceeded, wantReason: v1alpha1.RunReasonCompleted},
	})
}

func TestStillWorking(t *testing.T) {
	cases := map[string]struct {
		phase v1alpha1.RunPhase
		want  bool
	}{
		"running":       {phase: v1alpha1.RunRunning, want: true},
		"succeeded":     {phase: v1alpha1.RunSucceeded},
		"failed":        {phase: v1alpha1.RunFailed},
		"stopped":       {phase: v1alpha1.RunSuspended},
		"never started": {phase: v1alpha1.RunPending},
		"no answer yet": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := stillWorking(v1alpha1.RunNodeStatus{Node: "a", Phase: tc.phase}); got != tc.want {
				t.Errorf("stillWorking = %v; want %v", got, tc.want)
			}
		})
	}
}

func TestResumedAt(t *testing.T) {
	cases := map[string]struct {
		conditions []metav1.Condition
		want       time.Time
	}{
		"never suspended": {},
		"suspended still": {conditions: []metav1.Condition{{Type: v1alpha1.RunConditionSuspended, Status: metav1.ConditionTrue, LastTransitionTime: *at(time.Hour)}}},
		"resumed an hour in": {conditions: []metav1.Condition{
			{Type: v1alpha1.RunConditionComplete, Status: metav1.ConditionFalse, LastTransitionTime: *at(2 * time.Hour)},
			{Type: v1alpha1.RunConditionSuspended, Status: metav1.ConditionFalse, LastTransitionTime: *at(time.Hour)},
		}, want: t0.Add(time.Hour)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := resumedAt(&v1alpha1.TransformRunStatus{Conditions: tc.conditions}); !got.Equal(tc.want) {
				t.Errorf("resumedAt = %v; want %v", got, tc.want)
			}
		})
	}
}
