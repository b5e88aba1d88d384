// Package integration runs kubectl-mxjob against a real API server (envtest: kube-apiserver and
// etcd with mlkube's CRDs), through kubectl's own ConfigFlags, as a user's kubeconfig would.
package integration

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/mxjob"
)

var (
	cfg *rest.Config
	k8s client.Client
)

func TestMain(m *testing.M) {
	if !kubetest.HaveEnvtest() {
		os.Exit(0)
	}
	os.Exit(run(m))
}

// run starts the API server with the CRDs alone: the plugin's reads and writes need no webhook,
// and without the manager the jobs stay as created, so outputs are exact.
func run(m *testing.M) int {
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "manifests", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "starting envtest: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
		}
	}()
	if k8s, err = client.New(cfg, client.Options{Scheme: mxjob.NewScheme()}); err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}
	return m.Run()
}

// plugin runs kubectl-mxjob as Main does, its ConfigFlags wrapped to reach envtest and its
// discovery cache in cacheDir.
func plugin(t testing.TB, cacheDir string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	flags := cli.NewConfigFlags().WithWrapConfigFn(func(*rest.Config) *rest.Config { return rest.CopyConfig(cfg) })
	flags.CacheDir = &cacheDir
	env := cli.NewEnv(genericiooptions.IOStreams{In: bytes.NewBufferString(stdin), Out: out, ErrOut: errOut}, flags, mxjob.NewScheme())
	code = cli.Execute(mxjob.NewRoot(env), args)
	return out.String(), errOut.String(), code
}
