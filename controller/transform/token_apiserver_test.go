package transform

import (
	"bytes"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/internal/transformertoken"
)

// generatedManagerRole is the ClusterRole controller-gen writes from the markers
// (manifests/rbac/role.yaml), the manager's cluster-wide permissions.
func generatedManagerRole(t *testing.T) rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile("../../manifests/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var r rbacv1.ClusterRole
		if err := docs.Decode(&r); err != nil {
			t.Fatalf("no ClusterRole manager in manifests/rbac/role.yaml: %v", err)
		}
		if r.Kind == "ClusterRole" && r.Name == "manager" {
			return r
		}
	}
}

// underGeneratedRole starts an API server with namespace "tenant" and returns an admin client and
// one for a user holding only the manager's generated ClusterRole: it may create and patch Secrets
// and not read them, so a client that read before writing would get 403.
func underGeneratedRole(t *testing.T) (admin, manager client.Client) {
	t.Helper()
	cfg := kubetest.StartAPIServer(t)
	admin, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	role := generatedManagerRole(t)
	role.ObjectMeta = metav1.ObjectMeta{Name: "generated-manager"}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "generated-manager"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "generated-manager"}},
	}
	for _, o := range []client.Object{&role, binding, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "tenant"}}} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	manager = kubetest.Impersonate(t, cfg, scheme.New(), "generated-manager")
	// The role is what the test says it is: no reading of Secrets.
	var probe corev1.Secret
	if err := manager.Get(ctx, client.ObjectKey{Namespace: "tenant", Name: "any"}, &probe); !apierrors.IsForbidden(err) {
		t.Fatalf("get secrets under the generated role: %v, want forbidden", err)
	}
	return admin, manager
}

// tokenFixture is the Transform tenant/t of UID uid-1, a transformer key of ID k1, and the name
// of the token Secret they give: what the tests under the generated role apply.
func tokenFixture() (*v1alpha1.Transform, []byte, client.ObjectKey) {
	tr := defaulted(builders.Transform("t").Namespace("tenant").Runtime("img"))
	tr.UID = "uid-1"
	return tr, bytes.Repeat([]byte{9}, transformertoken.KeySize), client.ObjectKey{Namespace: "tenant", Name: tokenSecretName(tr, "k1")}
}

// TestTokenSecretIsAppliedUnderTheGeneratedRole runs applyTokenSecret on a real API server as a
// user holding only the manager's generated ClusterRole (underGeneratedRole). A Secret a tenant
// created first under the token Secret's name, with data of its choosing, is overwritten.
func TestTokenSecretIsAppliedUnderTheGeneratedRole(t *testing.T) {
	admin, manager := underGeneratedRole(t)
	ctx := t.Context()
	tr, key, name := tokenFixture()
	// The tenant was first, with a token of its own choosing and an extra key.
	planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name},
		Data: map[string][]byte{wire.TransformerTokenKey: []byte("chosen-by-tenant"), "extra": []byte("x")}}
	if err := admin.Create(ctx, planted); err != nil {
		t.Fatal(err)
	}
	if err := applyTokenSecret(ctx, manager, tr, "k1", key); err != nil {
		t.Fatalf("apply under the generated role: %v", err)
	}
	var got corev1.Secret
	if err := admin.Get(ctx, name, &got); err != nil {
		t.Fatal(err)
	}
	if want := transformertoken.Derive("k1", key, "tenant", "t", "uid-1"); string(got.Data[wire.TransformerTokenKey]) != want {
		t.Errorf("token %q, want the derived %q: the tenant's planted token survived", got.Data[wire.TransformerTokenKey], want)
	}
	if ref := metav1.GetControllerOf(&got); ref == nil || ref.UID != "uid-1" || ref.Kind != "Transform" {
		t.Errorf("controller reference %+v, want the Transform's, so that garbage collection removes the Secret with it", ref)
	}
	if got.Labels[v1alpha1.LabelName] != "t" {
		t.Errorf("labels %v, want the transformer labels", got.Labels)
	}

	// A second Transform's Secret that does not exist yet is created the same way.
	other := defaulted(builders.Transform("u").Namespace("tenant").Runtime("img"))
	other.UID = "uid-2"
	if err := applyTokenSecret(ctx, manager, other, "k1", key); err != nil {
		t.Fatalf("create under the generated role: %v", err)
	}
}
