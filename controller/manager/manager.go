// Package manager builds mlkube's controller-runtime manager: the webhook server with
// cert-controller certificates, health and metrics endpoints, leader election for controllers,
// and the registration of webhooks once certificates exist.
package manager

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/certs"
	"github.com/mlkube/mlkube/controller/internal/agentclient"
	"github.com/mlkube/mlkube/controller/internal/agentpods"
	"github.com/mlkube/mlkube/controller/kueue"
	"github.com/mlkube/mlkube/controller/mxjob"
	"github.com/mlkube/mlkube/controller/transform"
	"github.com/mlkube/mlkube/controller/transformrun"
	"github.com/mlkube/mlkube/internal/tokenkeys"
	mlkubewebhook "github.com/mlkube/mlkube/webhook"
)

// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=mlkube-system,resources=leases,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// The metrics endpoint authenticates and authorizes its callers through the API server.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Options configure the manager; cmd/manager sets them from flags.
type Options struct {
	Namespace      string // where the manager runs: the cert Secret and the leader lease
	MetricsAddr    string // "0" disables
	SecureMetrics  bool
	ProbeAddr      string
	LeaderElection bool
	WebhookHost    string
	WebhookPort    int
	// WebhookDrain is how long the webhook server goes on answering, closing each connection,
	// after the manager is told to stop (see drainingServer); within the pod's grace period.
	WebhookDrain          time.Duration
	CertDir               string
	CertSecret            string
	WebhookService        string
	MutatingWebhook       string
	ValidatingWebhook     string
	ExtraCertDNSNames     []string
	LeaderElectionID      string
	LeaderElectionRelease bool
	// QPS and Burst bound the manager's API client; a 200-worker job needs 400 creates.
	QPS   float32
	Burst int
	// MxJobWorkers is how many MxJobs reconcile at once.
	MxJobWorkers int
	// AgentNamespace and AgentPort locate the node agents whose statistics fill Transform status.
	AgentNamespace string
	AgentPort      int
	// DatapathTokenFile is the projected ServiceAccount token (audience mlkube-datapath) the
	// manager presents to the agents; "" sends none.
	DatapathTokenFile string
	// RunPoll is how often a running TransformRun's agents are asked how its shares go.
	RunPoll time.Duration
	// RunAgentGrace is how long a node's agent may not answer (or have no Ready pod) before its
	// share of a TransformRun fails.
	RunAgentGrace time.Duration
	// PodImages are the io shim's and the code runtimes' images transformer pods run; a release
	// pins its own (hack/release).
	PodImages wire.PodImages
}

// DefaultOptions are the production defaults; flags override them.
func DefaultOptions() Options {
	return Options{
		Namespace:             "mlkube-system",
		MetricsAddr:           ":8443",
		SecureMetrics:         true,
		ProbeAddr:             ":8081",
		LeaderElection:        true,
		WebhookPort:           9443,
		WebhookDrain:          5 * time.Second,
		CertDir:               "/tmp/k8s-webhook-server/serving-certs",
		CertSecret:            "mlkube-webhook-cert",
		WebhookService:        "mlkube-webhook-service",
		MutatingWebhook:       "mlkube-mutating-webhook-configuration",
		ValidatingWebhook:     "mlkube-validating-webhook-configuration",
		LeaderElectionID:      "mlkube-manager.mlkube.io",
		LeaderElectionRelease: true,
		QPS:                   100,
		Burst:                 200,
		MxJobWorkers:          5,
		AgentNamespace:        wire.AgentNamespace,
		AgentPort:             wire.AgentPort,
		DatapathTokenFile:     wire.TokenFile,
		RunPoll:               transformrun.DefaultPoll,
		RunAgentGrace:         transformrun.DefaultGrace,
		PodImages:             wire.DefaultPodImages(),
	}
}

var agentLabels = wire.AgentLabels()

var managedBy = klabels.SelectorFromSet(klabels.Set{labels.ManagedBy: labels.ManagedByValue})

// CacheOptions is what the manager's informers keep. The only Secret the manager reads is its own
// certificate Secret: just that one is cached, which is also all its Role allows. Pods and
// Services are watched by the managed-by label, which keeps the cluster's other ones off the wire,
// but anyone may set it: each is slimmed (slim.go) so that a forged one costs a small constant.
// Nothing reads managed fields, so no object keeps them.
func CacheOptions(opts Options) cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {
				Namespaces: map[string]cache.Config{opts.Namespace: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", opts.CertSecret),
			},
			&corev1.Pod{}:     {Label: managedBy, Transform: slimPod},
			&corev1.Service{}: {Label: managedBy, Transform: slimService},
		},
	}
}

// hardenTLS keeps webhook and metrics TLS at 1.2 or newer and turns HTTP/2 off: HTTP/2's stream
// reset and rapid reset attacks (CVE-2023-44487, CVE-2023-39325) cost a server far more than a
// client, and admission traffic gains nothing from HTTP/2.
func hardenTLS(c *tls.Config) {
	c.MinVersion = tls.VersionTLS12
	c.NextProtos = []string{"http/1.1"}
}

// New builds the manager. Webhooks are registered by a runnable that waits for the certificates,
// so the API server never reaches a webhook served with a certificate it cannot verify.
func New(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	ready := make(chan struct{})
	watcher := certs.NewWatcher(opts.CertDir, ready)
	queued, err := kueue.Served(cfg)
	if err != nil {
		return nil, err
	}
	cacheOpts, s := CacheOptions(opts), scheme.New()
	if queued {
		utilruntime.Must(kueuev1.AddToScheme(s))
		// Only the Workloads of MxJobs, which carry the managed-by label, not every team's.
		cacheOpts.ByObject[&kueuev1.Workload{}] = cache.ByObject{Label: managedBy}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: s,
		Cache:  cacheOpts,
		Metrics: metricsserver.Options{
			BindAddress:    opts.MetricsAddr,
			SecureServing:  opts.SecureMetrics,
			FilterProvider: metricsFilter(opts.SecureMetrics),
			TLSOpts:        []func(*tls.Config){hardenTLS},
		},
		HealthProbeBindAddress: opts.ProbeAddr,
		WebhookServer: newDrainingServer(webhook.NewServer(webhook.Options{
			Host:    opts.WebhookHost,
			Port:    opts.WebhookPort,
			CertDir: opts.CertDir,
			TLSOpts: []func(*tls.Config){hardenTLS, func(c *tls.Config) { c.GetCertificate = watcher.GetCertificate }},
		}), opts.WebhookDrain),
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              opts.LeaderElectionID,
		LeaderElectionNamespace:       opts.Namespace,
		LeaderElectionReleaseOnCancel: opts.LeaderElectionRelease,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	secret := types.NamespacedName{Namespace: opts.Namespace, Name: opts.CertSecret}
	dnsName := fmt.Sprintf("%s.%s.svc", opts.WebhookService, opts.Namespace)
	err = certs.Setup(mgr, certs.Options{
		Secret:            secret,
		CertDir:           opts.CertDir,
		DNSName:           dnsName,
		ExtraDNSNames:     append([]string{fmt.Sprintf("%s.%s.svc.cluster.local", opts.WebhookService, opts.Namespace)}, opts.ExtraCertDNSNames...),
		MutatingWebhook:   opts.MutatingWebhook,
		ValidatingWebhook: opts.ValidatingWebhook,
		Ready:             ready,
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(watcher); err != nil {
		return nil, err
	}
	reg := &webhookRegistrar{mgr: mgr, ready: ready, registered: make(chan struct{}), kueue: queued}
	if err := mgr.Add(reg); err != nil {
		return nil, err
	}
	if err := setupControllers(mgr, opts); err != nil {
		return nil, err
	}
	if queued {
		ctrl.Log.Info("Kueue's API is served: MxJobs labelled " + labels.KueueQueueName + " are queued by Kueue")
		if err := (&kueue.Reconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("mxjob-kueue")}).SetupWithManager(context.Background(), mgr); err != nil {
			return nil, fmt.Errorf("setting up the MxJob Kueue integration: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	serving := certs.ServingCheck(watcher, mgr.GetClient(), secret, dnsName)
	if err := mgr.AddReadyzCheck("webhooks", reg.readyCheck(serving)); err != nil {
		return nil, err
	}
	return mgr, nil
}

// setupControllers registers the MxJob, Transform and TransformRun controllers. The Transform
// controller's statistics collector and the TransformRun controller reach the same node agents,
// with the same token.
func setupControllers(mgr ctrl.Manager, opts Options) error {
	// The agents' pods are not the manager's to cache; a list when they are needed is cheap.
	agents := agentpods.Lister{Reader: mgr.GetAPIReader(), Namespace: opts.AgentNamespace, Selector: agentLabels}
	if err := (&mxjob.Reconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("mxjob-controller"), Agents: &agents,
	}).SetupWithManager(mgr, opts.MxJobWorkers); err != nil {
		return fmt.Errorf("setting up the MxJob controller: %w", err)
	}
	stats := transform.NewCollector(mgr.GetAPIReader(), opts.AgentNamespace, agentLabels, opts.AgentPort)
	var token *agentclient.TokenFile
	if opts.DatapathTokenFile != "" {
		token = agentclient.NewTokenFile(opts.DatapathTokenFile)
	}
	stats.Token = token
	// The key Secret is read by name through the API reader: the manager caches no Secrets.
	keys := &tokenkeys.Source{Reader: mgr.GetAPIReader(), Writer: mgr.GetClient(), Namespace: opts.AgentNamespace}
	if err := mgr.Add(keys); err != nil {
		return err
	}
	if err := (&transform.Reconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("transform-controller"), Stats: stats,
		Images: opts.PodImages, Keys: keys,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the Transform controller: %w", err)
	}
	runs := &transformrun.Reconciler{
		Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("transformrun-controller"),
		Agents: &transformrun.Agents{
			Lister: agents, Port: opts.AgentPort,
			HTTP: &http.Client{Timeout: 5 * time.Second}, Token: token,
		},
		Poll: opts.RunPoll, Grace: opts.RunAgentGrace,
	}
	if err := runs.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the TransformRun controller: %w", err)
	}
	return nil
}

func metricsFilter(secure bool) func(*rest.Config, *http.Client) (metricsserver.Filter, error) {
	if !secure {
		return nil
	}
	return filters.WithAuthenticationAndAuthorization
}

// webhookRegistrar registers the webhooks once certificates exist.
type webhookRegistrar struct {
	mgr        ctrl.Manager
	ready      <-chan struct{}
	registered chan struct{}
	kueue      bool
}

func (r *webhookRegistrar) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-r.ready:
	}
	if err := mlkubewebhook.Register(r.mgr, r.kueue); err != nil {
		return fmt.Errorf("registering webhooks: %w", err)
	}
	close(r.registered)
	<-ctx.Done()
	return nil
}

func (r *webhookRegistrar) NeedLeaderElection() bool { return false }

// readyCheck passes once the webhooks are registered, the certificate served is one the API
// server trusts (serving) and the webhook server completes a handshake: only then may the Service
// send the API server's calls to this replica.
func (r *webhookRegistrar) readyCheck(serving healthz.Checker) healthz.Checker {
	started := r.mgr.GetWebhookServer().StartedChecker()
	return func(req *http.Request) error {
		select {
		case <-r.registered:
		default:
			return errors.New("webhook certificates are not ready yet")
		}
		if err := serving(req); err != nil {
			return err
		}
		return started(req)
	}
}
