package kubetest

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// madeFor selects what the controllers made for owner, an MxJob or a Transform: the objects in
// its namespace that carry the label naming it.
func madeFor(owner client.Object) []client.ListOption {
	var label string
	switch owner.(type) {
	case *v1beta1.MxJob:
		label = v1beta1.LabelJobName
	case *v1alpha1.Transform:
		label = v1alpha1.LabelName
	default:
		panic(fmt.Sprintf("kubetest: the controllers make nothing for a %T", owner))
	}
	return []client.ListOption{client.InNamespace(owner.GetNamespace()), client.MatchingLabels{label: owner.GetName()}}
}

// Pods lists the pods of owner, an MxJob or a Transform.
func (c Client) Pods(ctx context.Context, owner client.Object) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := c.List(ctx, &pods, madeFor(owner)...)
	return pods.Items, err
}

// Services lists the Services of owner, an MxJob or a Transform.
func (c Client) Services(ctx context.Context, owner client.Object) ([]corev1.Service, error) {
	var svcs corev1.ServiceList
	err := c.List(ctx, &svcs, madeFor(owner)...)
	return svcs.Items, err
}

// WaitForPods waits until owner has n pods (0: all are deleted) and returns them.
func (c Client) WaitForPods(t testing.TB, what string, owner client.Object, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	c.Eventually(t, what, func(ctx context.Context) (bool, error) {
		var err error
		pods, err = c.Pods(ctx, owner)
		return len(pods) == n, err
	})
	return pods
}
