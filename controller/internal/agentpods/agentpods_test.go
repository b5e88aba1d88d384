package agentpods

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func agent(node, ip string, ready bool, age time.Duration) corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Unix(1e9, 0).Add(-age))},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{PodIP: ip, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func TestReady(t *testing.T) {
	got := Ready([]corev1.Pod{
		agent("a", "10.0.0.2", true, time.Minute), // replaced by the newer pod below
		agent("a", "10.0.0.3", true, time.Second),
		agent("b", "10.0.0.4", false, time.Minute),
		agent("c", "", true, time.Minute),
	})
	if diff := cmp.Diff(map[string]string{"a": "10.0.0.3"}, got); diff != "" {
		t.Errorf("Ready (-want +got):\n%s", diff)
	}
}
