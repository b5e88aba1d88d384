package agent

import (
	"context"
	"net/http"
	"testing"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// BenchmarkAuthorization is what authorization costs the data path: the same hpush echo at the
// same concurrency, once with every caller let in and once reviewed by access.Reviewer against a
// real API server (a ServiceAccount token from TokenRequest, a RoleBinding of
// mlkube-datapath-user's rules), whose answers are cached: the ratio x-open is the reviewed
// run's speed over the open one's (1.0 is free).
func BenchmarkAuthorization(b *testing.B) {
	cs := kubernetes.NewForConfigOrDie(kubetest.StartAPIServer(b))
	token := boundToken(b, cs)
	reviewer := access.NewReviewer(cs.AuthenticationV1().TokenReviews(), cs.AuthorizationV1().SubjectAccessReviews(), access.DefaultOptions(wire.Audience))
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			var open float64
			for _, mode := range []string{"open", "rbac"} {
				b.Run(mode, func(b *testing.B) {
					e := newEnv(b, func(o *Options) {
						if mode == "rbac" {
							o.Access = reviewer
						}
					})
					e.addTransform("echo", etlv1alpha1.CommHPush, "", echo)
					url := e.transformURL("echo", "object", wire.Query{})
					payload := transformertest.Object{Size: size}.Bytes()
					nsPerOp := runObjects(b, size, benchClients, httpClients(b, http.MethodPut, url, token, payload))
					if mode == "open" {
						open = nsPerOp
					} else {
						b.ReportMetric(open/nsPerOp, "x-open")
					}
				})
			}
		})
	}
}

// boundToken is a token of ServiceAccount default/client for the data path, which a RoleBinding
// lets use default's Transforms.
func boundToken(b *testing.B, cs kubernetes.Interface) string {
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "client"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "datapath-user"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{access.Group}, Resources: []string{access.ResourceTransform}, Verbs: []string{access.VerbUse}},
	}}
	if _, err := cs.RbacV1().Roles("default").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "client"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "datapath-user"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "client", Namespace: "default"}}}
	if _, err := cs.RbacV1().RoleBindings("default").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts("default").CreateToken(ctx, "client",
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{wire.Audience}}}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return tr.Status.Token
}
