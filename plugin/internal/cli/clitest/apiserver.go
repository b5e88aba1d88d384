package clitest

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// APIServer is a real API server (envtest: kube-apiserver and etcd) with mlkube's CRDs alone: a
// plugin's reads and writes need no webhook, and without the manager objects stay as created, so
// outputs are exact. Client reads and writes as the admin, for a test's setup and checks.
type APIServer struct {
	Config *rest.Config
	Scheme *k8sruntime.Scheme
	Client client.Client
}

// RunWithAPIServer is a TestMain: it starts the API server, runs the tests with it, stops it and
// returns the exit code. Without envtest's binaries it skips, as the other integration suites do.
func RunWithAPIServer(m *testing.M, scheme *k8sruntime.Scheme, run func(*APIServer)) int {
	_, self, _, _ := runtime.Caller(0)
	env := kubetest.Envtest(filepath.Join(filepath.Dir(self), "..", "..", "..", ".."))
	// No manager serves the webhooks here; without their configurations the API server calls none.
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{}
	return kubetest.RunWithEnvtest(m, env, func(_ context.Context, env *envtest.Environment) error {
		c, err := client.New(env.Config, client.Options{Scheme: scheme})
		if err != nil {
			return fmt.Errorf("a client of the API server: %w", err)
		}
		run(&APIServer{Config: env.Config, Scheme: scheme, Client: c})
		return nil
	})
}

// Run runs the plugin whose root newRoot builds, as its main would, with kubectl's ConfigFlags
// wrapped to reach the API server and the discovery cache in cacheDir.
func (s *APIServer) Run(t testing.TB, newRoot func(*cli.Env) *cobra.Command, cacheDir, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	flags := cli.NewConfigFlags().WithWrapConfigFn(func(*rest.Config) *rest.Config { return rest.CopyConfig(s.Config) })
	flags.CacheDir = &cacheDir
	env := cli.NewEnv(genericiooptions.IOStreams{In: bytes.NewBufferString(stdin), Out: out, ErrOut: errOut}, flags, s.Scheme)
	code = cli.Execute(newRoot(env), args)
	return out.String(), errOut.String(), code
}

// CreateNamespace creates the namespace a test works in, failing the test when it cannot.
func (s *APIServer) CreateNamespace(t testing.TB, name string) {
	t.Helper()
	if err := s.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}
