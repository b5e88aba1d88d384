package transform

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/controller/transform/podspec"
)

// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch

// buildNetworkPolicy makes the NetworkPolicy that lets only the node agents reach t's transformer
// pods: every request reaches a transformer through its node's agent (hpull included, and
// transformers fetch objects from the agent), so any other caller is one going around the
// agent's authentication. The agents are the pods of agentLabels in the namespace agentNamespace,
// matched by its immutable name label; both selectors sit in one peer, so a pod must pass both.
// The policy is named after the Transform, whose names are short enough for a DNS label.
func buildNetworkPolicy(t *v1alpha1.Transform, agentNamespace string, agentLabels map[string]string) *networkingv1.NetworkPolicy {
	port := intstr.FromInt32(podspec.Port(t))
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name:            t.Name,
			Namespace:       t.Namespace,
			Labels:          podspec.Labels(t),
			OwnerReferences: podspec.ControlledBy(t),
		},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: podspec.Labels(t)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: agentNamespace}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: maps.Clone(agentLabels)},
				}},
				// The protocol is spelled out, as the API server would default it, so that the
				// stored spec equals the built one and an unchanged policy is never patched.
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: &port}},
			}},
		},
	}
}

// restoreNetworkPolicy sets in got, the stored policy, the spec and labels of want, the policy
// the Transform needs, and reports whether that changed anything. Labels others added stay.
func restoreNetworkPolicy(got, want *networkingv1.NetworkPolicy) bool {
	changed := false
	if !equality.Semantic.DeepEqual(got.Spec, want.Spec) {
		got.Spec, changed = *want.Spec.DeepCopy(), true
	}
	for k, v := range want.Labels {
		if got.Labels[k] != v {
			if got.Labels == nil {
				got.Labels = map[string]string{}
			}
			got.Labels[k], changed = v, true
		}
	}
	return changed
}
