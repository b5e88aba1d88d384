package kubetest

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// StartAPIServer runs a bare API server for one test or benchmark (a real kube-apiserver and
// etcd with RBAC, without mlkube's CRDs or webhooks: what TokenReview, SubjectAccessReview and
// RBAC questions need) and stops it when that ends. It returns the admin's config. Without
// envtest's binaries the test is skipped (see [HaveEnvtest]).
func StartAPIServer(t testing.TB) *rest.Config {
	t.Helper()
	if !HaveEnvtest() {
		t.Skip("KUBEBUILDER_ASSETS is not set (`make test` and `make bench` set it)")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting the API server: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return cfg
}

// Impersonate is a client of cfg's API server acting as user in groups, as kubectl --as does:
// it has only the rights RBAC gives them, which is what a test of a role or a refusal needs.
func Impersonate(t testing.TB, cfg *rest.Config, scheme *runtime.Scheme, user string, groups ...string) client.Client {
	t.Helper()
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := client.New(as, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatalf("a client impersonating %s: %v", user, err)
	}
	return c
}
