package integration

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// TestTransformNetworkPolicy: a Transform's transformer pods admit only the node agents, on the
// transformer's port, and the controller puts the policy back when someone edits or deletes it.
func TestTransformNetworkPolicy(t *testing.T) {
	ctx := context.Background()
	tr := builders.Transform("netpol").Runtime("mlkube/transformer-echo:dev").Obj()
	k8s.CreateTemporary(t, tr)
	transformers := map[string]string{"app.kubernetes.io/managed-by": "mlkube", "etl.mlkube.io/name": "netpol",
		"app.kubernetes.io/name": "etl", "app.kubernetes.io/component": "transformer"}
	want := networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: transformers},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": opts.AgentNamespace}},
				PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "mlkube", "app.kubernetes.io/component": "node-agent"}},
			}},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(v1alpha1.DefaultPort))}},
		}},
	}
	key := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: tr.Name, Namespace: tr.Namespace}}
	asWanted := func(p *networkingv1.NetworkPolicy) (bool, error) {
		return equality.Semantic.DeepEqual(want, p.Spec), nil
	}

	policy := kubetest.WaitFor(t, k8s, "the Transform's NetworkPolicy", key, func(*networkingv1.NetworkPolicy) (bool, error) { return true, nil })
	if diff := cmp.Diff(want, policy.Spec); diff != "" {
		t.Errorf("policy spec (-want +got):\n%s", diff)
	}
	if owner := metav1.GetControllerOf(policy); owner == nil || owner.Kind != "Transform" || owner.UID != tr.UID {
		t.Errorf("controller %+v; want the Transform %s (UID %s), so that garbage collection removes the policy with it", owner, tr.Name, tr.UID)
	}

	// Opened to everyone on another port: the controller closes it again.
	kubetest.Patch(t, k8s, policy, func(p *networkingv1.NetworkPolicy) {
		p.Spec.Ingress[0].Ports[0].Port = ptr.To(intstr.FromInt32(1))
		p.Spec.Ingress = append(p.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{})
	})
	kubetest.WaitFor(t, k8s, "the edited NetworkPolicy restored", key, asWanted)

	// Deleted: the controller makes a new one.
	if err := k8s.Delete(ctx, policy); err != nil {
		t.Fatal(err)
	}
	kubetest.WaitFor(t, k8s, "the deleted NetworkPolicy recreated", key, func(p *networkingv1.NetworkPolicy) (bool, error) {
		return p.UID != policy.UID && equality.Semantic.DeepEqual(want, p.Spec), nil
	})
}
