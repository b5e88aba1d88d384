// Package transformrun tests the TransformRun controller against a real kube-apiserver, with fake
// node agents: in-memory implementations of the runs API (api/wire/noderuns.go) on loopback
// addresses 127.0.0.2, 127.0.0.3, … that the agent pods' status.podIP names. It runs its own
// manager with only that controller, a short poll and grace period, and a token file, which the
// shared suite's production options do not allow.
package transformrun

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
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/controller/internal/agentclient"
	"github.com/mlkube/mlkube/controller/internal/agentpods"
	"github.com/mlkube/mlkube/controller/transformrun"
	"github.com/mlkube/mlkube/internal/kubetest"
)

const (
	agentNamespace = "mlkube-datapath"
	agentToken     = "manager-token"
	// poll and grace are short so that a test sees many polls and a node's loss within seconds.
	poll  = 200 * time.Millisecond
	grace = 3 * time.Second
)

var (
	k8s kubetest.Client
	// watcher watches runs for the write-rate test.
	watcher client.WithWatch
	// agentPort is the port of every fake agent, each on its own loopback address, as every real
	// agent listens on the manager's --agent-port at its own pod IP.
	agentPort     int
	agentSelector = map[string]string{"app.kubernetes.io/component": "node-agent"}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true)))
	env := kubetest.Envtest(filepath.Join("..", "..", ".."))
	// This manager serves no webhooks; without configurations the API server calls none.
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{}
	return kubetest.RunWithEnvtest(m, env, func(ctx context.Context, env *envtest.Environment) error {
		if err := start(ctx, env.Config); err != nil {
			return fmt.Errorf("starting the TransformRun controller: %w", err)
		}
		return nil
	})
}

func start(ctx context.Context, cfg *rest.Config) error {
	var err error
	if watcher, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		return err
	}
	k8s = kubetest.Client{Client: watcher, Interval: 100 * time.Millisecond, Timeout: 30 * time.Second}
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: agentNamespace}}); err != nil {
		return err
	}
	if agentPort, err = freePort(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mlkube-transformrun-")
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(agentToken+"\n"), 0o600); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme.New(), Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return err
	}
	r := &transformrun.Reconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("transformrun-controller"),
		Agents: &transformrun.Agents{
			Lister: agentpods.Lister{Reader: mgr.GetAPIReader(), Namespace: agentNamespace, Selector: agentSelector}, Port: agentPort,
			// No proxy from the environment: the fake agents are on loopback addresses.
			HTTP:  &http.Client{Timeout: time.Second, Transport: &http.Transport{}},
			Token: agentclient.NewTokenFile(tokenFile),
		},
		Poll: poll, Grace: grace,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "manager stopped: %v\n", err)
		}
	}()
	return nil
}

// freePort is a port free on the first fake agent's address.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
