package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// An ObjectStore makes the agents sign requests with the namespace's store keys for its creator
// (docs/design/object-stores.md): through the real API server and the manager's webhooks, a user
// who may create ObjectStores but not read the Secret of keys is refused on create and on update,
// naming the Secret; one who may read it is admitted, with every default filled; an anonymous
// store asks nothing; and a store the webhook refuses names its fields.
func TestObjectStoreCreatorMayReadItsKeys(t *testing.T) {
	ctx := context.Background()
	newStore := func(name string, anonymous bool) *v1alpha1.ObjectStore {
		return &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1alpha1.ObjectStoreSpec{Endpoint: "https://s3.example.com", Bucket: "team-a-raw", Anonymous: anonymous}}
	}
	storesOnly := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "objectstores-only"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"objectstores"}, Verbs: []string{"create", "get", "update"}}}}
	keys := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "store-keys-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{v1alpha1.ObjectStoreSecretName}, Verbs: []string{"get"}}}}
	k8s.MustCreate(t, storesOnly)
	k8s.MustCreate(t, keys)
	bind(t, "default", "storer", storesOnly.Name)
	bind(t, "default", "keeper", storesOnly.Name, keys.Name)

	storer := impersonate(t, "storer")
	err := storer.Create(ctx, newStore("storers", false))
	wantInvalid(t, err, "spec.credentials.secretName")
	if err != nil && !strings.Contains(err.Error(), "storer may not get secrets mlkube-object-stores in namespace default") {
		t.Errorf("the refusal does not name the Secret: %v", err)
	}
	anon := newStore("public", true)
	if err := storer.Create(ctx, anon); err != nil {
		t.Fatalf("an anonymous store asks for no keys, but was refused: %v", err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), anon) })

	keeper := impersonate(t, "keeper")
	s := newStore("raw", false)
	if err := keeper.Create(ctx, s); err != nil {
		t.Fatalf("a user who may read the keys was refused: %v", err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), s) })
	want := v1alpha1.ObjectStoreSpec{Endpoint: "https://s3.example.com", Bucket: "team-a-raw", Region: "us-east-1", Addressing: v1alpha1.AddressingPath,
		Credentials: &v1alpha1.ObjectStoreCredentials{SecretName: "mlkube-object-stores", AccessKeyIDKey: "raw.accessKeyID", SecretAccessKeyKey: "raw.secretAccessKey"}}
	if diff := cmp.Diff(want, s.Spec); diff != "" {
		t.Errorf("the stored store's defaults (-want +got):\n%s", diff)
	}

	// The storer may update stores, but not point this one's keys at an endpoint of their own.
	var got v1alpha1.ObjectStore
	if err := storer.Get(ctx, client.ObjectKeyFromObject(s), &got); err != nil {
		t.Fatal(err)
	}
	got.Spec.Endpoint = "https://elsewhere.example.com"
	err = storer.Update(ctx, &got)
	wantInvalid(t, err, "spec.credentials.secretName")

	bad := newStore("bad", false)
	bad.Spec.Endpoint, bad.Spec.Bucket = "https://s3.example.com/path", "Bad_Bucket"
	wantInvalid(t, keeper.Create(ctx, bad), "spec.endpoint", "spec.bucket")
}
