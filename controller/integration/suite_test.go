package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/controller/manager"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// The webhook configurations as controller-gen writes them, before kustomize prefixes them.
const (
	mutatingConfig   = "mutating-webhook-configuration"
	validatingConfig = "validating-webhook-configuration"
)

var (
	cfg       *rest.Config
	k8s       kubetest.Client
	opts      manager.Options
	readyzURL string
)

func TestMain(m *testing.M) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	// Kueue's API is served here, as on a cluster with Kueue installed, so the manager turns the
	// MxJob integration on; every other test proves jobs without a queue are not touched.
	env := kubetest.Envtest(filepath.Join("..", ".."))
	crds, err := kubetest.KueueCRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, crds...)
	os.Exit(kubetest.RunWithEnvtest(m, env, func(ctx context.Context, env *envtest.Environment) error {
		cfg = env.Config
		if err := startManager(ctx, env); err != nil {
			return fmt.Errorf("starting the manager: %w", err)
		}
		return nil
	}))
}

// startManager creates what the install bundle ships (the namespace and the empty certificate
// Secret) and runs the production manager against the test API server.
func startManager(ctx context.Context, env *envtest.Environment) error {
	s := scheme.New()
	utilruntime.Must(kueuev1.AddToScheme(s))
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	// The API server answers in milliseconds; only the controllers' work is waited for.
	k8s = kubetest.Client{Client: c, Interval: 100 * time.Millisecond, Timeout: 30 * time.Second}
	opts = manager.DefaultOptions()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}}); err != nil {
		return err
	}
	if err := k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: opts.CertSecret, Namespace: opts.Namespace}}); err != nil {
		return err
	}
	// The agents' namespace, where the manager keeps the transformer token keys.
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.AgentNamespace}}); err != nil {
		return err
	}
	probePort, err := freePort()
	if err != nil {
		return err
	}
	certDir, err := os.MkdirTemp("", "mlkube-certs-")
	if err != nil {
		return err
	}
	wio := env.WebhookInstallOptions
	opts.WebhookHost, opts.WebhookPort = wio.LocalServingHost, wio.LocalServingPort
	opts.CertDir = certDir
	opts.MetricsAddr = "0"
	opts.ProbeAddr = fmt.Sprintf("127.0.0.1:%d", probePort)
	opts.LeaderElection = false
	opts.MutatingWebhook, opts.ValidatingWebhook = mutatingConfig, validatingConfig
	opts.ExtraCertDNSNames = []string{"localhost"}
	readyzURL = fmt.Sprintf("http://%s/readyz", opts.ProbeAddr)

	mgr, err := manager.New(cfg, opts)
	if err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "manager stopped: %v\n", err)
		}
	}()
	// Poll readiness the way the kubelet does: the webhooks are usable once it passes.
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		resp, err := http.Get(readyzURL)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet: the poll tries again until its timeout
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
