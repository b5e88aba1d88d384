package replicas

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/controller/manager"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// What the replicas share: the API server (through kubeconfig), the binary, the namespace of
// the certificate Secret and the lease, and envtest's webhook address the API server calls.
var (
	k8s         kubetest.Client
	opts        = manager.DefaultOptions()
	managerBin  string
	kubeconfig  string
	webhookAddr string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mlkube-replicas-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := kubetest.RunWithEnvtest(m, kubetest.Envtest(filepath.Join("..", "..", "..")), func(ctx context.Context, env *envtest.Environment) error {
		return setup(ctx, env, dir)
	})
	os.RemoveAll(dir)
	os.Exit(code)
}

// setup builds cmd/manager, gives its processes a kubeconfig and creates what the install bundle
// ships: the namespace and the empty certificate Secret.
func setup(ctx context.Context, env *envtest.Environment, dir string) error {
	managerBin = filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", managerBin, "github.com/mlkube/mlkube/cmd/manager")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building cmd/manager: %w", err)
	}
	wio := env.WebhookInstallOptions
	webhookAddr = fmt.Sprintf("%s:%d", wio.LocalServingHost, wio.LocalServingPort)
	var err error
	if kubeconfig, err = writeKubeconfig(env, dir); err != nil {
		return fmt.Errorf("writing the managers' kubeconfig: %w", err)
	}
	c, err := client.New(env.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	// Two replicas start within a second on a cluster and race for the CA and the lease; a
	// minute covers building caches, electing and generating keys on a slow machine.
	k8s = kubetest.Client{Client: c, Interval: 100 * time.Millisecond, Timeout: time.Minute}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: opts.CertSecret, Namespace: opts.Namespace}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeconfig gives the manager processes a user of their own on the test API server.
func writeKubeconfig(env *envtest.Environment, dir string) (string, error) {
	user, err := env.ControlPlane.AddUser(envtest.User{Name: "mlkube-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	b, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, b, 0o600)
}
