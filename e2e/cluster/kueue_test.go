package cluster

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mlkube/mlkube/internal/images"
)

func TestKueueObjects(t *testing.T) {
	objs, err := kueueObjects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	if objs[0].GetKind() != "Namespace" || objs[len(objs)-1].GetKind() != "ValidatingWebhookConfiguration" && objs[len(objs)-1].GetKind() != "MutatingWebhookConfiguration" {
		t.Errorf("objects from %s to %s; want the Namespace first and the webhooks last", objs[0].GetKind(), objs[len(objs)-1].GetKind())
	}
	for _, u := range objs {
		kinds[u.GetKind()]++
		if u.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		c := containers[0].(map[string]any)
		if c["image"] != images.Kueue.Ref || c["imagePullPolicy"] != "IfNotPresent" {
			t.Errorf("Kueue's manager runs %v pulled %v; want %s never pulled", c["image"], c["imagePullPolicy"], images.Kueue.Ref)
		}
		if user, _, _ := unstructured.NestedInt64(u.Object, "spec", "template", "spec", "securityContext", "runAsUser"); user != 65532 {
			t.Errorf("runAsUser %d; want 65532", user)
		}
		if cpu, _, _ := unstructured.NestedString(c, "resources", "requests", "cpu"); cpu != "100m" {
			t.Errorf("cpu request %q; want 100m", cpu)
		}
	}
	if kinds["APIService"] != 0 || kinds["Deployment"] != 1 || kinds["CustomResourceDefinition"] < 10 ||
		kinds["MutatingWebhookConfiguration"] != 1 || kinds["ValidatingWebhookConfiguration"] != 1 {
		t.Errorf("objects by kind %v; want Kueue's CRDs, one Deployment, its webhooks and no APIService", kinds)
	}
}
