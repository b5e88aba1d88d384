package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// impersonate is a client acting as user, an authenticated user of no group but
// system:authenticated, as kubectl --as does: only the user's own rights, which the webhooks'
// SubjectAccessReviews then see.
func impersonate(t *testing.T, user string) client.Client {
	t.Helper()
	return kubetest.Impersonate(t, cfg, k8s.Scheme(), user, "system:authenticated")
}

// onlyCreate is a ClusterRole that may create resource of etl.mlkube.io and nothing else.
func onlyCreate(t *testing.T, resource string) string {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: resource + "-only"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{resource}, Verbs: []string{"create"}}}}
	k8s.MustCreate(t, role)
	return role.Name
}

// bind binds each ClusterRole of roles to user in namespace ns.
func bind(t *testing.T, ns, user string, roles ...string) {
	t.Helper()
	for _, role := range roles {
		k8s.MustCreate(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user + "-" + role, Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}})
	}
}

// shippedRoles creates the bundle's ClusterRoles of names, as install.yaml ships them.
func shippedRoles(t *testing.T, names ...string) {
	t.Helper()
	roles, err := kubetest.ClusterRoles(filepath.Join("..", "..", "manifests", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		r, ok := roles[name]
		if !ok {
			t.Fatalf("install.yaml ships no ClusterRole %s", name)
		}
		r.ResourceVersion = ""
		k8s.MustCreate(t, &r)
	}
}

// A run makes the agents use its Transforms, read its source and write its destination for its
// creator (issue 24): a user who may create TransformRuns but holds none of those rights is
// refused, through the real API server, on each field with the right it needs; an editor, with
// the roles the built-in edit gathers, is admitted.
func TestTransformRunCreatorNeedsTheDataPathRights(t *testing.T) {
	ctx := context.Background()
	// Dry runs: an admitted one gives the manager little to do, and a dry run needs the same
	// rights as the run it previews.
	run := func(name string) *v1alpha1.TransformRun {
		return &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: v1alpha1.TransformRunSpec{Transform: "upper>>md5", DryRun: true,
				Source: v1alpha1.RunSource{Prefix: "raw"}, Destination: v1alpha1.RunDestination{Prefix: "out"}}}
	}

	bind(t, "default", "runner", onlyCreate(t, "transformruns"))
	err := impersonate(t, "runner").Create(ctx, run("runner-run"))
	wantInvalid(t, err, "spec.transform", "spec.transform", "spec.source.prefix", "spec.source.prefix", "spec.destination.prefix")
	for _, want := range []string{
		"runner may not use transforms.etl.mlkube.io upper in namespace default",
		"runner may not list objects.etl.mlkube.io in namespace default",
		"runner may not create objects.etl.mlkube.io in namespace default",
		"the ClusterRole mlkube-datapath-user grants it",
	} {
		if err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}

	// envtest runs no controller-manager, so nothing aggregates the bundle's roles into the
	// built-in edit: the editor is bound to the ones edit gathers in a cluster.
	editRoles := []string{"mlkube-edit", "mlkube-datapath-user"}
	shippedRoles(t, editRoles...)
	bind(t, "default", "editor", editRoles...)
	r := run("editor-run")
	if err := impersonate(t, "editor").Create(ctx, r); err != nil {
		t.Fatalf("the editor's run was refused: %v", err)
	}
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), r) })
}
