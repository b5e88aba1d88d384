package local

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// waitNodesReady waits until want nodes report Ready.
func waitNodesReady(ctx context.Context, cs kubernetes.Interface, want int) error {
	return pollErr(ctx, 3*time.Minute, fmt.Sprintf("%d nodes Ready", want), func() (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, n := range nodes.Items {
			if nodeReady(n) {
				ready++
			}
		}
		if ready < want {
			return false, fmt.Errorf("%d of %d nodes Ready", ready, want)
		}
		return true, nil
	})
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitDNSAndServiceAccount waits for a ready CoreDNS replica and for the default namespace's
// service account, which pod creation needs.
func waitDNSAndServiceAccount(ctx context.Context, cs kubernetes.Interface) error {
	err := pollErr(ctx, 3*time.Minute, "CoreDNS ready", func() (bool, error) {
		d, err := cs.AppsV1().Deployments(metav1.NamespaceSystem).Get(ctx, dnsName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if d.Status.ReadyReplicas < 1 {
			return false, fmt.Errorf("CoreDNS: no ready replica")
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return pollErr(ctx, time.Minute, "default service account", func() (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
}
