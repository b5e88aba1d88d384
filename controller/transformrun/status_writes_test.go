package transformrun

import (
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestShouldWrite(t *testing.T) {
	old := v1alpha1.TransformRunStatus{Phase: v1alpha1.RunRunning, Nodes: []v1alpha1.RunNodeStatus{node("a", v1alpha1.RunRunning, v1alpha1.RunCounts{DoneObjects: 1})}}
	counted := *old.DeepCopy()
	counted.Nodes[0].DoneObjects = 2
	nodeDone := *counted.DeepCopy()
	nodeDone.Nodes[0].Phase = v1alpha1.RunSucceeded
	cases := map[string]struct {
		next       v1alpha1.TransformRunStatus
		sinceWrite time.Duration
		want       bool
	}{
		"nothing changed":                   {next: old, sinceWrite: time.Hour},
		"counts within the interval":        {next: counted, sinceWrite: time.Second},
		"counts after the interval":         {next: counted, sinceWrite: 2 * time.Second, want: true},
		"counts, never written by this one": {next: counted, want: true},
		"a node's phase at once":            {next: nodeDone, sinceWrite: time.Millisecond, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := shouldWrite(&old, &tc.next, tc.sinceWrite, 2*time.Second); got != tc.want {
				t.Errorf("shouldWrite = %v; want %v", got, tc.want)
			}
		})
	}
}
