package integration

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/transformertoken"
)

// TestTransformerGetsItsCredential: the manager made the cluster key, the controller applied the
// Transform's token Secret (over one a tenant planted first), mounted it in the transformer pod
// and recorded the key in status.nodes[].tokenKey, from which the node agent derives the same
// token.
func TestTransformerGetsItsCredential(t *testing.T) {
	ctx := context.Background()
	createNode(t, "token-node")
	tr := builders.Transform("token").Runtime("mlkube/transformer-echo:dev").Spec(func(s *v1alpha1.TransformSpec) {
		s.NodeSelector = map[string]string{"etl-test": t.Name()}
	}).Obj()
	// The tenant plants a Secret under the name the controller will use, with a token it chose.
	planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tr.Namespace, Name: tr.Name + "-mlkube-token-k1"},
		Data: map[string][]byte{wire.TransformerTokenKey: []byte("chosen-by-tenant")}}
	k8s.CreateTemporary(t, planted)
	k8s.MustCreate(t, tr)
	pods := k8s.WaitForPods(t, "the transformer pod", tr, 1)

	var keySecret corev1.Secret
	k8s.MustGet(t, client.ObjectKey{Namespace: opts.AgentNamespace, Name: transformertoken.SecretName}, &keySecret)
	keys, err := transformertoken.Parse(keySecret.Data)
	if err != nil {
		t.Fatalf("the manager's key Secret: %v", err)
	}
	keyID, key := keys.Current()
	if pods[0].Annotations[v1alpha1.AnnotationTokenKey] != keyID {
		t.Errorf("pod annotation %q, want the current key %s", pods[0].Annotations[v1alpha1.AnnotationTokenKey], keyID)
	}
	var token corev1.Secret
	k8s.MustGet(t, client.ObjectKey{Namespace: tr.Namespace, Name: tr.Name + "-mlkube-token-" + keyID}, &token)
	if want := transformertoken.Derive(keyID, key, tr.Namespace, tr.Name, tr.UID); string(token.Data[wire.TransformerTokenKey]) != want {
		t.Errorf("token Secret holds %q, want the derived token (the tenant's planted one must not survive)", token.Data[wire.TransformerTokenKey])
	}
	mounted := false
	for _, v := range pods[0].Spec.Volumes {
		mounted = mounted || (v.Secret != nil && v.Secret.SecretName == token.Name)
	}
	if !mounted {
		t.Errorf("the pod does not mount %s: %+v", token.Name, pods[0].Spec.Volumes)
	}

	markReady(t, ctx, &pods[0], "10.3.0.1")
	got := k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	if len(got.Status.Nodes) != 1 || got.Status.Nodes[0].TokenKey != keyID {
		t.Errorf("status.nodes %+v, want tokenKey %s", got.Status.Nodes, keyID)
	}
	if err := k8s.Delete(ctx, tr); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// TestTokenSecretListsTheNamespacesStores: the token Secret of an hpull Transform of argument url
// lists the origins of its namespace's ObjectStores beside its token, and the list follows the
// stores as they come and go (the controller watches them); a Transform that does not take store
// URLs gets no list.
func TestTokenSecretListsTheNamespacesStores(t *testing.T) {
	ctx := context.Background()
	// A namespace of its own: no other test's stores are listed.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "token-stores"}}
	k8s.MustCreate(t, ns)
	createNode(t, "stores-node")
	transform := func(name string, edit func(*v1alpha1.TransformSpec)) *v1alpha1.Transform {
		tr := builders.Transform(name).Namespace(ns.Name).Runtime("mlkube/transformer-echo:dev").Spec(func(s *v1alpha1.TransformSpec) {
			s.NodeSelector = map[string]string{"etl-test": t.Name()}
			edit(s)
		}).Obj()
		k8s.CreateTemporary(t, tr)
		return tr
	}
	pull := transform("pull", func(s *v1alpha1.TransformSpec) { s.Communication, s.Argument = v1alpha1.CommHPull, v1alpha1.ArgURL })
	push := transform("push", func(*v1alpha1.TransformSpec) {})
	keyID := k8s.WaitForPods(t, "the hpull transformer pod", pull, 1)[0].Annotations[v1alpha1.AnnotationTokenKey]
	tokenSecret := func(tr *v1alpha1.Transform) client.ObjectKey {
		return client.ObjectKey{Namespace: ns.Name, Name: tr.Name + "-mlkube-token-" + keyID}
	}
	lists := func(want string) {
		t.Helper()
		k8s.Eventually(t, fmt.Sprintf("the token Secret to list stores %q beside its token", want), func(ctx context.Context) (bool, error) {
			var s corev1.Secret
			if err := k8s.Get(ctx, tokenSecret(pull), &s); err != nil {
				return false, err
			}
			stores, listed := s.Data[wire.TransformerStoresKey]
			if !listed || string(stores) != want || len(s.Data[wire.TransformerTokenKey]) == 0 {
				// Retried; the last one is reported on timeout.
				return false, fmt.Errorf("it lists %q (key present: %v), token of %d bytes", stores, listed, len(s.Data[wire.TransformerTokenKey]))
			}
			return true, nil
		})
	}
	store := func(name string, spec v1alpha1.ObjectStoreSpec) *v1alpha1.ObjectStore {
		spec.Bucket, spec.Anonymous = "data", true
		s := &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns.Name}, Spec: spec}
		k8s.CreateTemporary(t, s)
		return s
	}

	lists("")
	a := store("a", v1alpha1.ObjectStoreSpec{Endpoint: "http://S3-A.example:9000"})
	lists("http://s3-a.example:9000\n")
	store("b", v1alpha1.ObjectStoreSpec{Endpoint: "https://s3-b.example", Addressing: v1alpha1.AddressingVirtualHost})
	lists("http://s3-a.example:9000\nhttps://data.s3-b.example:443\n")
	if err := k8s.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	lists("https://data.s3-b.example:443\n")

	k8s.WaitForPods(t, "the hpush transformer pod", push, 1)
	var s corev1.Secret
	k8s.MustGet(t, tokenSecret(push), &s)
	if v, ok := s.Data[wire.TransformerStoresKey]; ok {
		t.Errorf("the token Secret of an hpush Transform lists stores %q; want no list", v)
	}
}
