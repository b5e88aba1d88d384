package transform

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestInitTimeoutPlan(t *testing.T) {
	testPlans(t, map[string]planCase{
		"still starting: requeue at the init timeout": {
			tr: echoTransform(), nodes: twoNodes(), pods: []corev1.Pod{tpod(echoTransform(), "node-1", 5*time.Second, true), tpod(echoTransform(), "node-2", 5*time.Second, false)},
			want: planWant{stage: v1alpha1.StageInitializing, nodesReady: "1/2", reason: "ready on 1 of 2", requeue: 40 * time.Second},
		},
		"Abort: not ready within initTimeout aborts and deletes every pod": {
			tr: echoTransform(), nodes: twoNodes(), pods: []corev1.Pod{tpod(echoTransform(), "node-1", time.Minute, true), tpod(echoTransform(), "node-2", time.Minute, false)},
			want: planWant{stage: v1alpha1.StageAborted, deletePods: []string{"node-1", "node-2"}, reason: "node node-2: transformer not ready within spec.initTimeout (45s)"},
		},
	})
}

func TestInitTimeout(t *testing.T) {
	tr := echoTransform()
	tr.Spec.InitTimeout = nil
	if got := initTimeout(tr); got != v1alpha1.DefaultInitTimeout {
		t.Errorf("initTimeout unset = %v; want the default %v", got, v1alpha1.DefaultInitTimeout)
	}
	tr.Spec.InitTimeout = &metav1.Duration{Duration: time.Minute}
	if got := initTimeout(tr); got != time.Minute {
		t.Errorf("initTimeout = %v; want 1m", got)
	}
}

func TestInitTimedOut(t *testing.T) {
	wasReady := func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "transformer", Started: ptrTo(true), Ready: true}}
	}
	cases := map[string]struct {
		pod  corev1.Pod
		want bool
	}{
		"never ready, past the limit":         {pod: tpod(echoTransform(), "node-1", time.Minute, false), want: true},
		"never ready, exactly at the limit":   {pod: tpod(echoTransform(), "node-1", 30*time.Second, false), want: true},
		"never ready, within the limit":       {pod: tpod(echoTransform(), "node-1", 29*time.Second, false)},
		"ready":                               {pod: tpod(echoTransform(), "node-1", time.Minute, true)},
		"ready once: its probe fails instead": {pod: tpod(echoTransform(), "node-1", time.Minute, false, wasReady)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := initTimedOut(&tc.pod, 30*time.Second, now); got != tc.want {
				t.Errorf("initTimedOut = %v; want %v", got, tc.want)
			}
		})
	}
}
