package transformrun

import (
	"testing"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestContinueOnErrorRunPhase(t *testing.T) {
	testRunPhases(t, map[string]runPhaseCase{
		"a node failed": {nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunFailed, allDone), node("b", v1alpha1.RunRunning, allDone)}, want: v1alpha1.RunFailed, wantReason: v1alpha1.RunReasonNodeFailed},
		"continueOnError goes on past a failed node": {spec: v1alpha1.TransformRunSpec{ContinueOnError: true},
			nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunFailed, allDone), node("b", v1alpha1.RunRunning, allDone)}, want: v1alpha1.RunRunning},
		"continueOnError ends Failed listing the failed node": {spec: v1alpha1.TransformRunSpec{ContinueOnError: true},
			nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunFailed, allDone), node("b", v1alpha1.RunSucceeded, allDone)}, want: v1alpha1.RunFailed, wantReason: v1alpha1.RunReasonNodeFailed},
		"continueOnError ends Failed when objects failed": {spec: v1alpha1.TransformRunSpec{ContinueOnError: true},
			nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunSucceeded, v1alpha1.RunCounts{PlannedObjects: 10, DoneObjects: 9, FailedObjects: 1})}, want: v1alpha1.RunFailed, wantReason: v1alpha1.RunReasonObjectsFailed},
	})
}

func TestNodeFailuresFailRun(t *testing.T) {
	cases := map[string]struct {
		continueOnError     bool
		failed, done, total int
		want                bool
	}{
		"no failure":                          {done: 1, total: 2},
		"the first failure fails the run":     {failed: 1, done: 1, total: 3, want: true},
		"continueOnError: the others go on":   {continueOnError: true, failed: 1, done: 1, total: 3},
		"continueOnError: until all finished": {continueOnError: true, failed: 1, done: 3, total: 3, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := &v1alpha1.TransformRunSpec{ContinueOnError: tc.continueOnError}
			if got := nodeFailuresFailRun(spec, tc.failed, tc.done, tc.total); got != tc.want {
				t.Errorf("nodeFailuresFailRun = %v; want %v", got, tc.want)
			}
		})
	}
}

func TestFailureStopsRun(t *testing.T) {
	nodes := []v1alpha1.RunNodeStatus{
		node("a", v1alpha1.RunRunning, allDone), node("b", v1alpha1.RunFailed, allDone), node("c", v1alpha1.RunFailed, allDone),
	}
	cases := map[string]struct {
		continueOnError bool
		nodes           []v1alpha1.RunNodeStatus
		want            string
	}{
		"the first failed node stops the rest": {nodes: nodes, want: "b"},
		"no failed node":                       {nodes: nodes[:1]},
		"continueOnError: nothing stops":       {continueOnError: true, nodes: nodes},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := failureStopsRun(&v1alpha1.TransformRunSpec{ContinueOnError: tc.continueOnError}, tc.nodes); got != tc.want {
				t.Errorf("failureStopsRun = %q; want %q", got, tc.want)
			}
		})
	}
}
