package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/etl"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// admin is a clientset of the API server as its admin, for what the etl scheme lacks (RBAC,
// TokenReviews).
func admin(t *testing.T) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(server.Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// bindAggregated binds user in ns to the rules of the built-in ClusterRole role as the
// controller-manager's aggregation would fill it (the test's API server runs no controllers):
// the union of the ClusterRoles its aggregationRule selects.
func bindAggregated(t *testing.T, cs kubernetes.Interface, ns, role, user string) {
	t.Helper()
	ctx := context.Background()
	builtin, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	filled := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns}}
	for _, sel := range builtin.AggregationRule.ClusterRoleSelectors {
		parts, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&sel)})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts.Items {
			filled.Rules = append(filled.Rules, p.Rules...)
		}
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, filled, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role + "-" + user, Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The first rule the role grants tells when the binding is in force.
	rule := filled.Rules[0]
	resource, sub, _ := strings.Cut(rule.Resources[0], "/")
	awaitAuthorizer(t, cs, user, nil, authzv1.ResourceAttributes{Namespace: ns, Group: rule.APIGroups[0], Resource: resource, Subresource: sub, Verb: rule.Verbs[0]})
}

// awaitAuthorizer returns once the API server's authorizer lets user (of groups) do what attrs
// say: it reads RBAC through a cache, so a request made at once after a binding may be refused
// (TestDataPathToken was, on a loaded machine).
func awaitAuthorizer(t *testing.T, cs kubernetes.Interface, user string, groups []string, attrs authzv1.ResourceAttributes) {
	t.Helper()
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &attrs}}
	for {
		review, err := cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// agentNamespace makes the agents' namespace as the bundle does for reaching them (every
// authenticated user may list its pods), with no agent in it.
func agentNamespace(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	ns := wire.AgentNamespace
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return
		}
		t.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "find-agents", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "find-agents", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "find-agents"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:authenticated"}}}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	awaitAuthorizer(t, cs, "anyone", []string{"system:authenticated"}, authzv1.ResourceAttributes{Namespace: ns, Resource: "pods", Verb: "list"})
}

// TestDataPathServiceAccount: an editor's first data path command creates the ServiceAccount
// mlkube-cli, says so once and how to grant it, and goes on with its token (to finding an agent,
// which this API server has none of); a viewer may not, and a ServiceAccount named with
// --service-account is never created.
func TestDataPathServiceAccount(t *testing.T) {
	const ns = "datapath-sa"
	cs := admin(t)
	server.CreateNamespace(t, ns)
	agentNamespace(t, cs)
	bindAggregated(t, cs, ns, "edit", "ed")
	bindAggregated(t, cs, ns, "view", "vera")
	ed, vera := server.As("ed", "system:authenticated"), server.As("vera", "system:authenticated")
	noAgent := "error: no Ready data path agent in namespace mlkube-datapath; is mlkube deployed there?\n"
	for _, step := range []struct {
		name    string
		code    int // 0: 1, failed
		run     func() (string, string, int)
		wantErr string
	}{
		{
			name: "the first use creates mlkube-cli",
			run:  func() (string, string, int) { return ed.Run(t, etl.NewRoot, t.TempDir(), "", "ls", "-n", ns) },
			wantErr: "created serviceaccount mlkube-cli in datapath-sa for the data path; grant it with: kubectl -n datapath-sa create rolebinding mlkube-cli-datapath --clusterrole=mlkube-datapath-user --serviceaccount=datapath-sa:mlkube-cli (docs/datapath-rbac.md)\n" +
				noAgent,
		},
		{
			name: "the next uses it",
			run: func() (string, string, int) {
				return ed.Run(t, etl.NewRoot, t.TempDir(), "", "cat", "raw/a.txt", "-n", ns)
			},
			wantErr: noAgent,
		},
		{
			name: "another ServiceAccount is not created",
			run: func() (string, string, int) {
				return ed.Run(t, etl.NewRoot, t.TempDir(), "", "object", "md5", "etl:raw/a.txt", "-", "-n", ns, "--service-account", "loader")
			},
			code:    cli.ExitUnknown,
			wantErr: "error: a data path token for ServiceAccount datapath-sa:loader: serviceaccounts \"loader\" not found (pass --service-account to use another)\n",
		},
		{
			name:    "a viewer may not request its tokens",
			run:     func() (string, string, int) { return vera.Run(t, etl.NewRoot, t.TempDir(), "", "ls", "-n", ns) },
			code:    cli.ExitUnknown,
			wantErr: "error: a data path token for ServiceAccount datapath-sa:mlkube-cli: serviceaccounts \"mlkube-cli\" is forbidden: User \"vera\" cannot create resource \"serviceaccounts/token\" in API group \"\" in the namespace \"datapath-sa\" (pass --service-account to use another); ask an administrator for access, or choose another namespace with -n\n",
		},
	} {
		out, errOut, code := step.run()
		if step.code == 0 {
			step.code = cli.ExitFailed
		}
		if code != step.code || out != "" || errOut != step.wantErr {
			t.Errorf("%s: exit %d (want %d), stdout %q\nstderr %q\nwant   %q", step.name, code, step.code, out, errOut, step.wantErr)
		}
	}
	sa, err := cs.CoreV1().ServiceAccounts(ns).Get(context.Background(), "mlkube-cli", metav1.GetOptions{})
	if err != nil || sa.Labels["app.kubernetes.io/managed-by"] != "kubectl-etl" {
		t.Errorf("ServiceAccount mlkube-cli after the first use: %v, labels %v", err, sa.Labels)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Get(context.Background(), "loader", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ServiceAccount loader: %v, want not found", err)
	}
}

// TestDataPathToken: the token an editor gets is mlkube-cli's, for the data path's audience only,
// as the agents' TokenReview sees it; the ServiceAccount is created on the way.
func TestDataPathToken(t *testing.T) {
	const ns = "datapath-token"
	cs := admin(t)
	server.CreateNamespace(t, ns)
	bindAggregated(t, cs, ns, "edit", "ed")
	ed, err := kubernetes.NewForConfig(server.As("ed", "system:authenticated").Config)
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	tok, err := etl.NewTokenRequester(ed, &errOut).Token(context.Background(), ns, "mlkube-cli")
	if err != nil {
		t.Fatal(err)
	}
	if want := "created serviceaccount mlkube-cli in datapath-token for the data path; grant it with: kubectl -n datapath-token create rolebinding mlkube-cli-datapath --clusterrole=mlkube-datapath-user --serviceaccount=datapath-token:mlkube-cli (docs/datapath-rbac.md)\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	for audience, wantAuthenticated := range map[string]bool{wire.Audience: true, "https://kubernetes.default.svc": false} {
		review, err := cs.AuthenticationV1().TokenReviews().Create(context.Background(),
			&authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: tok, Audiences: []string{audience}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st := review.Status
		if st.Authenticated != wantAuthenticated {
			t.Errorf("audience %s: authenticated %v (%s), want %v", audience, st.Authenticated, st.Error, wantAuthenticated)
		}
		if wantAuthenticated && st.User.Username != "system:serviceaccount:datapath-token:mlkube-cli" {
			t.Errorf("the token is %q's, want mlkube-cli's", st.User.Username)
		}
	}
}

// TestObjectPipeline: a pipeline's stages are Transforms of their own, each looked up by its
// name, not one Transform named "md5>>upper" (which the API server would not find).
func TestObjectPipeline(t *testing.T) {
	const ns = "object-pipeline"
	server.CreateNamespace(t, ns)
	cache := t.TempDir()
	if out, errOut, code := server.Run(t, etl.NewRoot, cache, transforms, "init", "-f", "-", "-n", ns); code != 0 {
		t.Fatalf("init: exit %d, %s%s", code, out, errOut)
	}
	src := filepath.Join(t.TempDir(), "a.txt")
	if err := os.WriteFile(src, []byte("meow"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Without the manager, no transformer runs: the first stage is ready nowhere.
	out, errOut, code := server.Run(t, etl.NewRoot, cache, "", "object", "md5>>upper", src, "-", "-n", ns)
	want := "error: transform md5 is ready on no node (stage Pending); see kubectl etl health md5\n"
	if code != 1 || out != "" || errOut != want {
		t.Errorf("exit %d, stdout %q\nstderr %q\nwant   %q", code, out, errOut, want)
	}
}
