package etl

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"github.com/mlkube/mlkube/api/wire"
)

func agentPodOn(name, node string, phase corev1.PodPhase, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: wire.AgentNamespace, Labels: wire.AgentLabels()},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func TestAgentPod(t *testing.T) {
	cases := map[string]struct {
		pods      []*corev1.Pod
		node      string
		want      string
		wantError string
	}{
		"any node: the first Ready one": {
			pods: []*corev1.Pod{agentPodOn("agent-a", "node-a", corev1.PodRunning, false), agentPodOn("agent-b", "node-b", corev1.PodRunning, true)},
			want: "agent-b",
		},
		"any node, none Ready": {
			pods:      []*corev1.Pod{agentPodOn("agent-a", "node-a", corev1.PodPending, false)},
			wantError: "no Ready data path agent in namespace mlkube-datapath; is mlkube deployed there?",
		},
		"one node: its running agent": {
			pods: []*corev1.Pod{agentPodOn("agent-a", "node-a", corev1.PodRunning, false), agentPodOn("agent-b", "node-b", corev1.PodRunning, true)},
			node: "node-a", want: "agent-a",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cs := k8sfake.NewClientset()
			for _, p := range tc.pods {
				if _, err := cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := portForwarder{cs: cs}.agentPod(context.Background(), tc.node)
			if tc.wantError != "" {
				if err == nil || err.Error() != tc.wantError {
					t.Errorf("error %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("agentPod(%q) = %q, %v; want %q", tc.node, got, err, tc.want)
			}
		})
	}
}
