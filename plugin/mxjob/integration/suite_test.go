// Package integration runs kubectl-mxjob against a real API server (envtest: kube-apiserver and
// etcd with mlkube's CRDs), through kubectl's own ConfigFlags, as a user's kubeconfig would.
package integration

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
	"github.com/mlkube/mlkube/plugin/mxjob"
)

var (
	server *clitest.APIServer
	k8s    client.Client
)

func TestMain(m *testing.M) {
	os.Exit(clitest.RunWithAPIServer(m, mxjob.NewScheme(), func(s *clitest.APIServer) { server, k8s = s, s.Client }))
}

// plugin runs kubectl-mxjob against the API server, its discovery cache in cacheDir.
func plugin(t testing.TB, cacheDir string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return server.Run(t, mxjob.NewRoot, cacheDir, stdin, args...)
}
