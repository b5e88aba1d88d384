package local

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestInstallDNSIsIdempotent(t *testing.T) {
	p, _ := testCluster(t)
	cs := fake.NewClientset()
	ctx := context.Background()
	for range 2 {
		if err := installDNS(ctx, cs, p, "mlkube/coredns:v1"); err != nil {
			t.Fatal(err)
		}
	}
	svc, err := cs.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP != p.ClusterDNS.String() {
		t.Errorf("kube-dns at %s, want the kubelets' clusterDNS %s", svc.Spec.ClusterIP, p.ClusterDNS)
	}
	d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, dnsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "mlkube/coredns:v1" || c.ImagePullPolicy != "IfNotPresent" {
		t.Errorf("container %s %s: want the imported image, never pulled", c.Image, c.ImagePullPolicy)
	}
	cm, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, dnsName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A forward would send queries the cluster cannot answer to a resolver off this machine.
	if f := cm.Data["Corefile"]; !strings.Contains(f, "kubernetes cluster.local") || strings.Contains(f, "forward") {
		t.Errorf("Corefile:\n%s", f)
	}
}
