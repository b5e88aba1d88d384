package local

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// corefile serves the cluster zone only. It has no `forward`: a name outside the cluster fails
// instead of being asked of a resolver off this machine.
const corefile = `.:53 {
    errors
    health :8080
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
}
`

const dnsName = "coredns"

var dnsLabels = map[string]string{"k8s-app": "kube-dns"}

// dnsObjects are CoreDNS as a Deployment behind the `kube-dns` Service at the kubelets'
// clusterDNS address, with the RBAC its kubernetes plugin needs.
func dnsObjects(p Plan, image string) (*corev1.ServiceAccount, *rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding, *corev1.ConfigMap, *appsv1.Deployment, *corev1.Service) {
	meta := metav1.ObjectMeta{Name: dnsName, Namespace: metav1.NamespaceSystem, Labels: dnsLabels}
	sa := &corev1.ServiceAccount{ObjectMeta: meta}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "mlkube:coredns"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "mlkube:coredns"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}},
	}
	cm := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"Corefile": corefile}}
	dns := []corev1.ContainerPort{
		{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
		{Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP},
	}
	deploy := &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: dnsLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: dnsLabels},
				Spec: corev1.PodSpec{
					ServiceAccountName: sa.Name,
					DNSPolicy:          corev1.DNSDefault,
					PriorityClassName:  "system-cluster-critical",
					Containers: []corev1.Container{{
						Name:            dnsName,
						Image:           image,
						ImagePullPolicy: corev1.PullIfNotPresent, // imported, never pulled
						Args:            []string{"-conf", "/etc/coredns/Corefile"},
						Ports:           dns,
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
							HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8181)},
						}},
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns", ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}},
					}}},
				},
			},
		},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: metav1.NamespaceSystem, Labels: dnsLabels},
		Spec: corev1.ServiceSpec{
			Selector:  dnsLabels,
			ClusterIP: p.ClusterDNS.String(),
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("dns-tcp")},
			},
		},
	}
	return sa, role, binding, cm, deploy, svc
}

// installDNS creates the CoreDNS objects; ones that exist already are left as they are.
func installDNS(ctx context.Context, cs kubernetes.Interface, p Plan, image string) error {
	sa, role, binding, cm, deploy, svc := dnsObjects(p, image)
	ns := metav1.NamespaceSystem
	opts := metav1.CreateOptions{}
	creates := []func() error{
		func() error { _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, opts); return err },
		func() error { _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, opts); return err },
		func() error { _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, opts); return err },
		func() error { _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, opts); return err },
		func() error { _, err := cs.AppsV1().Deployments(ns).Create(ctx, deploy, opts); return err },
		func() error { _, err := cs.CoreV1().Services(ns).Create(ctx, svc, opts); return err },
	}
	for _, create := range creates {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("installing CoreDNS: %w", err)
		}
	}
	return nil
}
