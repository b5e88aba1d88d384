package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

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
		// restartBeforeCert finds Kueue's pods by this label.
		if l, _, _ := unstructured.NestedString(u.Object, "spec", "template", "metadata", "labels", "control-plane"); l != "controller-manager" {
			t.Errorf("pod label control-plane=%q; want controller-manager", l)
		}
	}
	if !slices.ContainsFunc(objs, func(u *unstructured.Unstructured) bool {
		return u.GetKind() == "Secret" && u.GetNamespace() == KueueNamespace && u.GetName() == kueueCertSecret
	}) {
		t.Errorf("no Secret %s/%s, the one restartBeforeCert waits on", KueueNamespace, kueueCertSecret)
	}
	if kinds["APIService"] != 0 || kinds["Deployment"] != 1 || kinds["CustomResourceDefinition"] < 10 ||
		kinds["MutatingWebhookConfiguration"] != 1 || kinds["ValidatingWebhookConfiguration"] != 1 {
		t.Errorf("objects by kind %v; want Kueue's CRDs, one Deployment, its webhooks and no APIService", kinds)
	}
}

func TestStalePodsMountedTheSecretBeforeItWasFilled(t *testing.T) {
	at := func(sec int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC)) }
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "mlkube-e2e", Time: ptr.To(at(3))}, {Manager: "kueue", Time: ptr.To(at(5))}, {Manager: "no-time"},
	}}}
	filled := lastWrite(secret)
	if !filled.Equal(at(5).Time) {
		t.Fatalf("lastWrite = %v; want the later entry, %v", filled, at(5))
	}
	pods := []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "before", CreationTimestamp: at(4)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "same-second", CreationTimestamp: at(5)}},
		{ObjectMeta: metav1.ObjectMeta{Name: "after", CreationTimestamp: at(6)}},
	}
	var names []string
	for _, p := range stale(pods, filled) {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"before", "same-second"}) {
		t.Errorf("stale pods %v; want before and same-second", names)
	}
}
