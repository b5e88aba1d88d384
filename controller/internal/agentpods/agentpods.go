// Package agentpods finds the node agents that are ready, by their pods: the TransformRun
// controller sends each such node its share of a run, and the MxJob controller places the workers
// of a job with a dataset on those nodes.
package agentpods

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Lister lists the agent pods.
type Lister struct {
	// Reader lists the agent pods. The manager caches only the pods it made, so this is its API
	// reader: one list of the agents' namespace per call.
	Reader    client.Reader
	Namespace string
	Selector  client.MatchingLabels
}

// Ready maps each node to the IP of its Ready agent pod.
func (l *Lister) Ready(ctx context.Context) (map[string]string, error) {
	var pods corev1.PodList
	if err := l.Reader.List(ctx, &pods, client.InNamespace(l.Namespace), l.Selector); err != nil {
		return nil, fmt.Errorf("listing the node agents in namespace %s: %w", l.Namespace, err)
	}
	return Ready(pods.Items), nil
}

// Ready maps each node to the pod IP of a Ready agent pod on it; a node whose agent is
// restarting or not yet up has none. Of two Ready pods (a rolling update), the newer wins: the
// older is about to go.
func Ready(pods []corev1.Pod) map[string]string {
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	out := map[string]string{}
	for _, p := range pods {
		if p.Spec.NodeName != "" && p.Status.PodIP != "" && p.DeletionTimestamp == nil && podReady(&p) {
			out[p.Spec.NodeName] = p.Status.PodIP
		}
	}
	return out
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
