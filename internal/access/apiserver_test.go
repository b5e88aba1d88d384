package access

import (
	"context"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/mlkube/mlkube/internal/kubetest"
)

// TestAgainstTheAPIServer: real ServiceAccount tokens, TokenReview and RBAC decide, as on a cluster.
func TestAgainstTheAPIServer(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(kubetest.StartAPIServer(t))
	ctx := context.Background()
	for _, ns := range []string{"team-a", "team-b"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "client"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	token := func(ns string, audiences ...string) string {
		tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "client",
			&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: audiences}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	tokA, tokB := token("team-a", audience), token("team-b", audience)
	wrongAudience := token("team-a", "https://kubernetes.default.svc")

	// team-a's client may use team-a's Transforms and read team-a's data.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "datapath-user"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{Group}, Resources: []string{ResourceTransform}, Verbs: []string{VerbUse}},
		{APIGroups: []string{Group}, Resources: []string{ResourceObjects}, Verbs: []string{"get"}},
	}}
	if _, err := cs.RbacV1().Roles("team-a").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "client"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "datapath-user"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "client", Namespace: "team-a"}}}
	if _, err := cs.RbacV1().RoleBindings("team-a").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	r := NewReviewer(cs.AuthenticationV1().TokenReviews(), cs.AuthorizationV1().SubjectAccessReviews(), DefaultOptions(audience))
	use := func(ns string) Request {
		return Request{Verb: VerbUse, Namespace: ns, Resource: ResourceTransform, Name: "md5"}
	}
	readA := Request{Verb: "get", Namespace: "team-a", Resource: ResourceObjects}
	writeA := Request{Verb: "create", Namespace: "team-a", Resource: ResourceObjects}
	for name, tc := range map[string]struct {
		token      string
		reqs       []Request
		wantStatus int
	}{
		"a uses and reads a":             {tokA, []Request{use("team-a"), readA}, 0},
		"a may not write a":              {tokA, []Request{writeA}, 403},
		"b may not use a's Transform":    {tokB, []Request{use("team-a")}, 403},
		"b may not read a's data":        {tokB, []Request{readA}, 403},
		"a's token for another audience": {wrongAudience, []Request{use("team-a")}, 401},
		"no token":                       {"", []Request{use("team-a")}, 401},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := r.Check(ctx, withToken(tc.token), tc.reqs...)
			if tc.wantStatus == 0 {
				if err != nil || c.Name != "system:serviceaccount:team-a:client" {
					t.Fatalf("Check = %+v, %v; want team-a's client allowed", c, err)
				}
				return
			}
			if err == nil || Status(err) != tc.wantStatus {
				t.Errorf("Check = %v (status %d), want %d", err, Status(err), tc.wantStatus)
			}
		})
	}
}
