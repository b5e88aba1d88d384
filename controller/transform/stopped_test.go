package transform

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestStoppedPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"stop deletes the pods": {
			tr: func() *v1alpha1.Transform {
				tr := echoTransform()
				tr.Spec.Stopped = true
				return tr
			}(),
			nodes: twoNodes(), pods: []corev1.Pod{tpod(echoTransform(), "node-1", time.Minute, true), tpod(echoTransform(), "node-2", time.Minute, true)},
			want: planWant{stage: v1alpha1.StageStopped, deletePods: []string{"node-1", "node-2"}, reason: "spec.stopped is true"},
		},
	})
}

func TestStop(t *testing.T) {
	cases := map[string]struct {
		stage v1alpha1.Stage
	}{
		"a running Transform": {stage: v1alpha1.StageRunning},
		"an aborted one":      {stage: v1alpha1.StageAborted},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr := echoTransform()
			tr.Spec.Stopped, tr.Generation, tr.Status.Stage = true, 4, tc.stage
			going := tpod(tr, "node-2", time.Minute, true, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} })
			pods := []corev1.Pod{tpod(tr, "node-1", time.Minute, true), going}
			p := plan{status: *tr.Status.DeepCopy()}
			p.status.NodesReady = "2/2"
			stop(tr, pods, &p, now)
			var deleted []string
			for _, d := range p.deletePods {
				deleted = append(deleted, d.Annotations[v1alpha1.LabelNode])
			}
			if diff := cmp.Diff([]string{"node-1"}, deleted); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
			st := p.status
			if st.Stage != v1alpha1.StageStopped || st.ObservedGeneration != 4 || st.NodesReady != "" {
				t.Errorf("stage %q observed %d ready %q; want Stopped, generation 4 observed, no nodes", st.Stage, st.ObservedGeneration, st.NodesReady)
			}
		})
	}
}
