package transform

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/transform/podspec"
	"github.com/mlkube/mlkube/internal/builders"
)

var agentLabels = map[string]string{"app.kubernetes.io/name": "mlkube", "app.kubernetes.io/component": "node-agent"}

// wantPolicy is the policy of Transform "md5" of namespace "team-a" admitting the agents of
// namespace "mlkube-datapath" on port.
func wantPolicy(port int32) *networkingv1.NetworkPolicy {
	transformers := map[string]string{"app.kubernetes.io/managed-by": "mlkube", v1alpha1.LabelName: "md5",
		labels.Name: "etl", labels.Component: "transformer"}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name: "md5", Namespace: "team-a", Labels: transformers,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "etl.mlkube.io/v1alpha1", Kind: "Transform", Name: "md5",
				UID: "t-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: transformers},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "mlkube-datapath"}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: agentLabels},
				}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(port))}},
			}},
		},
	}
}

func TestBuildNetworkPolicy(t *testing.T) {
	for name, tc := range map[string]struct {
		transform *v1alpha1.Transform
		want      *networkingv1.NetworkPolicy
	}{
		"runtime form, default port": {
			transform: defaulted(builders.Transform("md5").Namespace("team-a").Runtime("mlkube/transformer-md5:dev")),
			want:      wantPolicy(v1alpha1.DefaultPort),
		},
		"pod template with its own port": {
			transform: defaulted(builders.Transform("md5").Namespace("team-a").PodTemplate("img").Spec(func(s *v1alpha1.TransformSpec) {
				s.PodTemplate.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}, {Name: v1alpha1.DefaultPortName, ContainerPort: 9000}}
			})),
			want: wantPolicy(9000),
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := buildNetworkPolicy(tc.transform, "mlkube-datapath", agentLabels)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("policy (-want +got):\n%s", diff)
			}
			pod := podspec.Build(tc.transform, "node-1", devImages)
			selector, err := metav1.LabelSelectorAsSelector(&got.Spec.PodSelector)
			if err != nil {
				t.Fatal(err)
			}
			if !selector.Matches(klabels.Set(pod.Labels)) {
				t.Errorf("the policy's selector %v does not select the Transform's pod %v", selector, pod.Labels)
			}
			listens := ""
			for _, e := range pod.Spec.Containers[0].Env {
				if e.Name == wire.EnvPort {
					listens = e.Value
				}
			}
			if port := got.Spec.Ingress[0].Ports[0].Port.String(); port != listens {
				t.Errorf("the policy opens port %s, the transformer listens on %s", port, listens)
			}
		})
	}
}

func TestNetworkPolicySelectsNoOtherTransformsPods(t *testing.T) {
	policy := buildNetworkPolicy(defaulted(builders.Transform("md5").Runtime("img")), "mlkube-datapath", agentLabels)
	other := podspec.Build(defaulted(builders.Transform("md5-v2").Runtime("img")), "node-1", devImages)
	selector, err := metav1.LabelSelectorAsSelector(&policy.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	if selector.Matches(klabels.Set(other.Labels)) {
		t.Errorf("the policy of md5 selects a pod of md5-v2: %v", other.Labels)
	}
}

func TestRestoreNetworkPolicy(t *testing.T) {
	for name, tc := range map[string]struct {
		edit        func(*networkingv1.NetworkPolicy)
		wantChanged bool
		wantLabels  map[string]string
	}{
		"as built": {edit: func(*networkingv1.NetworkPolicy) {}},
		"a label of someone else's is kept": {
			edit:       func(p *networkingv1.NetworkPolicy) { p.Labels["team"] = "a" },
			wantLabels: map[string]string{"team": "a"},
		},
		"the port changed": {
			edit:        func(p *networkingv1.NetworkPolicy) { p.Spec.Ingress[0].Ports[0].Port = ptr.To(intstr.FromInt32(1)) },
			wantChanged: true,
		},
		"a rule admitting everyone added": {
			edit: func(p *networkingv1.NetworkPolicy) {
				p.Spec.Ingress = append(p.Spec.Ingress, networkingv1.NetworkPolicyIngressRule{})
			},
			wantChanged: true,
		},
		"the pod selector emptied, selecting every pod of the namespace": {
			edit:        func(p *networkingv1.NetworkPolicy) { p.Spec.PodSelector = metav1.LabelSelector{} },
			wantChanged: true,
		},
		"labels removed": {
			edit:        func(p *networkingv1.NetworkPolicy) { p.Labels = nil },
			wantChanged: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			want := wantPolicy(8000)
			got := want.DeepCopy()
			tc.edit(got)
			if changed := restoreNetworkPolicy(got, want); changed != tc.wantChanged {
				t.Errorf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
				t.Errorf("restored spec (-want +got):\n%s", diff)
			}
			wantLabels := want.DeepCopy().Labels
			maps.Copy(wantLabels, tc.wantLabels)
			if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
				t.Errorf("restored labels (-want +got):\n%s", diff)
			}
		})
	}
}
