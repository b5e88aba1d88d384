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

	"github.com/mlkube/mlkube/controller/manager"
	"github.com/mlkube/mlkube/controller/scheme"
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
	if !kubetest.HaveEnvtest() {
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mlkube-replicas-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	managerBin = filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", managerBin, "github.com/mlkube/mlkube/cmd/manager")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building cmd/manager: %v\n", err)
		return 1
	}
	env := kubetest.Envtest(filepath.Join("..", "..", ".."))
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting envtest: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping envtest: %v\n", err)
		}
	}()
	wio := env.WebhookInstallOptions
	webhookAddr = fmt.Sprintf("%s:%d", wio.LocalServingHost, wio.LocalServingPort)
	if kubeconfig, err = writeKubeconfig(env, dir); err != nil {
		fmt.Fprintf(os.Stderr, "writing the managers' kubeconfig: %v\n", err)
		return 1
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Two replicas start within a second on a cluster and race for the CA and the lease; a
	// minute covers building caches, electing and generating keys on a slow machine.
	k8s = kubetest.Client{Client: c, Interval: 100 * time.Millisecond, Timeout: time.Minute}
	// What the install bundle ships: the namespace and the empty certificate Secret.
	ctx := context.Background()
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: opts.CertSecret, Namespace: opts.Namespace}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
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
