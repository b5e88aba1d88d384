package transform

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/transformertoken"
)

// TestStoresAreAppliedUnderTheGeneratedRole: the stores writer needs no read of Secrets either,
// and its field manager and the token's leave each other's key alone. It never creates a Secret;
// a list it wrote last is not written again unless asked (createPods asks), and a Transform
// created again under the same name, before its old Secret is collected, gets its token and its
// list.
func TestStoresAreAppliedUnderTheGeneratedRole(t *testing.T) {
	admin, manager := underGeneratedRole(t)
	ctx := t.Context()
	tr, key, name := tokenFixture()
	token := transformertoken.Derive("k1", key, "tenant", "t", "uid-1")
	var w storesWriter
	// secret reads the Secret, or says it is absent.
	secret := func() (corev1.Secret, bool) {
		t.Helper()
		var s corev1.Secret
		err := admin.Get(ctx, name, &s)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return s, err == nil
	}
	holds := func(step, wantToken, wantStores string) {
		t.Helper()
		s, ok := secret()
		stores, listed := s.Data[wire.TransformerStoresKey]
		if !ok || !listed || string(stores) != wantStores || string(s.Data[wire.TransformerTokenKey]) != wantToken {
			t.Fatalf("%s: Secret (exists: %v) holds token %q, stores %q (listed: %v); want token %q, stores %q",
				step, ok, s.Data[wire.TransformerTokenKey], stores, listed, wantToken, wantStores)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("under the generated role: %v", err)
		}
	}

	must(applyTokenSecret(ctx, manager, tr, "k1", key))
	must(w.apply(ctx, manager, tr, "k1", []string{"http://a:80"}, false))
	holds("stores applied after the token", token, "http://a:80\n")
	must(applyTokenSecret(ctx, manager, tr, "k1", key))
	holds("token applied again", token, "http://a:80\n")
	must(w.apply(ctx, manager, tr, "k1", nil, false))
	holds("the last store removed", token, "")

	// Deleted behind the writer's back: the writer creates no Secret, so none is left without
	// its token and its owner; the token's apply creates it, and the list goes in after.
	must(admin.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name}}))
	must(w.apply(ctx, manager, tr, "k1", []string{"http://a:80"}, true))
	if _, ok := secret(); ok {
		t.Fatal("the writer created a Secret")
	}
	must(applyTokenSecret(ctx, manager, tr, "k1", key))
	must(w.apply(ctx, manager, tr, "k1", []string{"http://a:80"}, false))
	holds("written into the token's new Secret", token, "http://a:80\n")
	must(w.apply(ctx, manager, tr, "k1", []string{"http://b:80"}, false))
	altered, _ := secret()
	altered.Data[wire.TransformerStoresKey] = []byte("http://x:80\n")
	must(admin.Update(ctx, &altered))
	must(w.apply(ctx, manager, tr, "k1", []string{"http://b:80"}, false))
	holds("the list written last is not written again", token, "http://x:80\n")
	must(w.apply(ctx, manager, tr, "k1", []string{"http://b:80"}, true))
	holds("unless asked", token, "http://b:80\n")

	// The Transform created again under its name, before garbage collection removed the old
	// one's Secret (this API server runs none): the new token's apply takes the controller
	// reference over, and the Secret is written though the list is the one written last.
	again := tr.DeepCopy()
	again.UID = "uid-2"
	must(applyTokenSecret(ctx, manager, again, "k1", key))
	must(w.apply(ctx, manager, again, "k1", []string{"http://b:80"}, false))
	newToken := transformertoken.Derive("k1", key, "tenant", "t", "uid-2")
	holds("a Transform of the same name created again", newToken, "http://b:80\n")
	s, _ := secret()
	if ref := metav1.GetControllerOf(&s); ref == nil || ref.UID != "uid-2" || len(s.OwnerReferences) != 1 || s.Labels[v1alpha1.LabelName] != "t" {
		t.Errorf("the Secret's owners are %+v, labels %v; want the new Transform alone", s.OwnerReferences, s.Labels)
	}
}
