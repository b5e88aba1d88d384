package tokenkeys

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/internal/transformertoken"
)

// firstGet passes Gets to a real client and hands the first one's error to the test.
type firstGet struct {
	client.Reader
	first chan error // buffered, one
}

func (f *firstGet) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := f.Reader.Get(ctx, key, obj, opts...)
	select {
	case f.first <- err:
	default:
	}
	return err
}

// TestStartWaitsForItsRoleOnTheAPIServer is the install race on a real API server: the manager's
// user holds the generated ClusterRole (create on secrets) but not yet its Role in the agents'
// namespace, so Start's first Get is forbidden. Once the shipped Role and a binding are created,
// Start gets past the refusal and creates the Secret the agents wait for.
func TestStartWaitsForItsRoleOnTheAPIServer(t *testing.T) {
	cfg := kubetest.StartAPIServer(t)
	admin, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	roles, err := kubetest.ClusterRoles("../../manifests/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	clusterRole, ok := roles["manager"]
	if !ok {
		t.Fatal("no ClusterRole manager in manifests/rbac/role.yaml")
	}
	clusterRole.ObjectMeta = metav1.ObjectMeta{Name: "manager"}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "manager"}}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&clusterRole,
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "manager"}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "manager"}},
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	manager := kubetest.Impersonate(t, cfg, scheme.New(), "manager")

	first := make(chan error, 1)
	s := &Source{Reader: &firstGet{Reader: manager, first: first}, Writer: manager, Namespace: ns, RetryAfter: 10 * time.Millisecond}
	// The deadline only keeps a Start that never succeeds from hanging the test.
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Start(startCtx) }()
	if err := <-first; !apierrors.IsForbidden(err) {
		t.Fatalf("Start's first Get without the Role: %v, want forbidden", err)
	}

	b, err := os.ReadFile("../../manifests/agent/manager-keys/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.Role
	if err := sigsyaml.Unmarshal(b, &role); err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{
		&role,
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: role.Name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}},
	} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var secret corev1.Secret
	if err := admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: transformertoken.SecretName}, &secret); err != nil {
		t.Fatalf("after the Role came: %v; want the Secret created by Start", err)
	}
	if len(secret.Data["k1"]) != transformertoken.KeySize {
		t.Errorf("the Secret holds %d keys, want k1 of %d bytes", len(secret.Data), transformertoken.KeySize)
	}
}
