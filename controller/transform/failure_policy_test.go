package transform

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/controller/internal/owned"
)

func TestFailurePolicyPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"Abort: a transformer that exits aborts": {
			tr: echoTransform(), nodes: twoNodes(), pods: []corev1.Pod{tpod(echoTransform(), "node-1", time.Minute, true), tpod(echoTransform(), "node-2", time.Minute, false, exited(2, time.Second))},
			want: planWant{stage: v1alpha1.StageAborted, deletePods: []string{"node-1", "node-2"}, reason: "node node-2: transformer container exited with code 2"},
		},
		"Aborted stays aborted for the same generation": {
			tr: func() *v1alpha1.Transform {
				tr := echoTransform()
				tr.Status.Stage, tr.Status.ObservedGeneration = v1alpha1.StageAborted, 1
				return tr
			}(),
			nodes: twoNodes(),
			want:  planWant{stage: v1alpha1.StageAborted},
		},
		"a new generation retries an aborted Transform": {
			tr: func() *v1alpha1.Transform {
				tr := echoTransform()
				tr.Status.Stage, tr.Status.ObservedGeneration, tr.Generation = v1alpha1.StageAborted, 1, 3
				return tr
			}(),
			nodes: twoNodes(),
			want:  planWant{stage: v1alpha1.StageInitializing, createOn: []string{"node-1", "node-2"}, nodesReady: "0/2", reason: "ready on 0 of 2"},
		},
		"Restart: a failed transformer waits out its backoff": {
			tr: restartingTransform(), nodes: twoNodes(), pods: []corev1.Pod{tpod(restartingTransform(), "node-1", time.Minute, true), tpod(restartingTransform(), "node-2", time.Minute, false, exited(2, 2*time.Second))},
			want: planWant{stage: v1alpha1.StageInitializing, nodesReady: "1/2", reason: "ready on 1 of 2", requeue: 3 * time.Second},
		},
		"Restart: then it is replaced": {
			tr: restartingTransform(), nodes: twoNodes(), pods: []corev1.Pod{tpod(restartingTransform(), "node-1", time.Minute, true), tpod(restartingTransform(), "node-2", time.Minute, false, exited(2, 10*time.Second))},
			want: planWant{stage: v1alpha1.StageInitializing, deletePods: []string{"node-2"}, nodesReady: "1/2", reason: "ready on 1 of 2"},
		},
	})
}

func TestPodFailure(t *testing.T) {
	evicted := func(p *corev1.Pod) {
		p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", "low on memory"
	}
	cases := map[string]struct {
		pod  corev1.Pod
		want string
	}{
		"healthy":                      {pod: tpod(echoTransform(), "node-1", time.Minute, true)},
		"starting":                     {pod: tpod(echoTransform(), "node-1", time.Second, false)},
		"its container exited":         {pod: tpod(echoTransform(), "node-1", time.Minute, true, exited(2, time.Second)), want: "transformer container exited with code 2 (Error) "},
		"the pod failed":               {pod: tpod(echoTransform(), "node-1", time.Minute, true, evicted), want: "transformer pod failed: Evicted low on memory"},
		"not ready within the timeout": {pod: tpod(echoTransform(), "node-1", time.Minute, false), want: "transformer not ready within spec.initTimeout (45s)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := podFailure(&tc.pod, 45*time.Second, now); got != tc.want {
				t.Errorf("podFailure = %q; want %q", got, tc.want)
			}
		})
	}
}

func TestRestartAfterBackoff(t *testing.T) {
	cases := map[string]struct {
		restarts     int32
		failedAgo    time.Duration
		wantRestarts int32
		wantDeleted  bool
		wantRequeue  time.Duration
	}{
		"the first restart waits the base backoff": {failedAgo: time.Second, wantRequeue: owned.Backoff(1) - time.Second},
		"then the pod is replaced, counted":        {failedAgo: owned.Backoff(1), wantRestarts: 1, wantDeleted: true},
		"each restart waits longer":                {restarts: 2, failedAgo: owned.Backoff(2), wantRestarts: 2, wantRequeue: owned.Backoff(3) - owned.Backoff(2)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := tpod(restartingTransform(), "node-1", time.Hour, false, exited(2, tc.failedAgo))
			ns := v1alpha1.NodeStatus{Node: "node-1", Restarts: tc.restarts}
			var p plan
			restartAfterBackoff(&pod, &ns, &p, now)
			if ns.Restarts != tc.wantRestarts || (len(p.deletePods) > 0) != tc.wantDeleted || p.requeueAfter != tc.wantRequeue {
				t.Errorf("restarts %d, deleted %v, requeue %v; want %d, %v, %v", ns.Restarts, len(p.deletePods) > 0, p.requeueAfter, tc.wantRestarts, tc.wantDeleted, tc.wantRequeue)
			}
		})
	}
}

func TestAbort(t *testing.T) {
	tr := echoTransform()
	going := tpod(tr, "node-2", time.Minute, false, func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} })
	pods := []corev1.Pod{tpod(tr, "node-1", time.Minute, true), going, tpod(tr, "node-3", time.Minute, false)}
	p := plan{createOn: []string{"node-4"}, requeueAfter: time.Second, deletePods: []*corev1.Pod{&pods[2]}}
	p.status.Nodes, p.status.NodesReady = []v1alpha1.NodeStatus{{Node: "node-1"}}, "1/3"
	abort(pods, &p, []string{"node node-3: down", "node node-1: down"}, now)
	var deleted []string
	for _, d := range p.deletePods {
		deleted = append(deleted, d.Annotations[v1alpha1.LabelNode])
	}
	if diff := cmp.Diff([]string{"node-1", "node-3"}, deleted); diff != "" {
		t.Errorf("deleted (-want +got), each pod not already going, once:\n%s", diff)
	}
	if p.status.Stage != v1alpha1.StageAborted || p.status.Reason != "node node-3: down; node node-1: down" {
		t.Errorf("stage %q reason %q; want Aborted naming every failure", p.status.Stage, p.status.Reason)
	}
	if p.createOn != nil || p.requeueAfter != 0 || p.status.Nodes != nil || p.status.NodesReady != "" {
		t.Errorf("createOn %v requeue %v nodes %v ready %q; want nothing started, no requeue, no nodes", p.createOn, p.requeueAfter, p.status.Nodes, p.status.NodesReady)
	}
}

func TestStillAborted(t *testing.T) {
	cases := map[string]struct {
		stage                v1alpha1.Stage
		observed, generation int64
		want                 bool
	}{
		"aborted, same spec":    {stage: v1alpha1.StageAborted, observed: 2, generation: 2, want: true},
		"aborted, spec changed": {stage: v1alpha1.StageAborted, observed: 2, generation: 3},
		"running":               {stage: v1alpha1.StageRunning, observed: 2, generation: 2},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr := echoTransform()
			tr.Generation, tr.Status.Stage, tr.Status.ObservedGeneration = tc.generation, tc.stage, tc.observed
			if got := stillAborted(tr); got != tc.want {
				t.Errorf("stillAborted = %v; want %v", got, tc.want)
			}
		})
	}
}
