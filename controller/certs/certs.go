// Package certs provides the webhook server's TLS certificates through cert-controller: the
// rotator keeps a CA and serving keypair in a Secret and injects the CA into the webhook
// configurations; a syncer writes the keypair into the server's certificate directory; the
// server reads it through a watcher created once the files exist.
//
// Writing the files ourselves, instead of mounting the Secret as a volume, removes the kubelet's
// Secret sync delay (up to a minute) from every start, and lets integration tests run the real
// rotator against an API server without a kubelet.
package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// cert-controller's rotator caches the Secrets of the namespace with no name selector, which RBAC
// cannot grant by resourceNames; writing is limited to the one Secret the certificates live in.
// +kubebuilder:rbac:groups="",namespace=mlkube-system,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",namespace=mlkube-system,resources=secrets,resourceNames=mlkube-webhook-cert,verbs=update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,resourceNames=mlkube-mutating-webhook-configuration;mlkube-validating-webhook-configuration,verbs=update

// Options names the objects the certificates are kept in and injected into.
type Options struct {
	// Secret holds the CA and the serving keypair; it must exist (the manifests ship it empty).
	Secret types.NamespacedName
	// CertDir is where the webhook server reads tls.crt and tls.key.
	CertDir string
	// DNSName is the serving certificate's name: <service>.<namespace>.svc.
	DNSName string
	// ExtraDNSNames are further names of the certificate.
	ExtraDNSNames []string
	// MutatingWebhook and ValidatingWebhook are the configurations that get the CA bundle.
	MutatingWebhook, ValidatingWebhook string
	// Ready is closed once the certificates are in CertDir and the CA is injected: webhooks may
	// be registered from then on.
	Ready chan struct{}
}

// The Secret's keys, as cert-controller's rotator writes them.
const (
	certName = "tls.crt"
	keyName  = "tls.key"
	caName   = "ca.crt"
)

// Setup adds the rotator and the Secret syncer to mgr.
func Setup(mgr manager.Manager, opts Options) error {
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      opts.Secret,
		CertDir:        opts.CertDir,
		CAName:         "mlkube-ca",
		CAOrganization: "mlkube",
		DNSName:        opts.DNSName,
		ExtraDNSNames:  opts.ExtraDNSNames,
		IsReady:        opts.Ready,
		Webhooks: []rotator.WebhookInfo{
			{Name: opts.MutatingWebhook, Type: rotator.Mutating},
			{Name: opts.ValidatingWebhook, Type: rotator.Validating},
		},
		// Every replica serves webhooks, so every replica needs the certificates.
		RequireLeaderElection: false,
	})
	if err != nil {
		return fmt.Errorf("adding the certificate rotator: %w", err)
	}
	syncer := &secretSyncer{Client: mgr.GetClient(), secret: opts.Secret, dir: opts.CertDir}
	return syncer.setup(mgr)
}

// Watcher serves the webhook server's certificate from CertDir once it exists. Until then TLS
// handshakes fail, which the API server reports under the webhooks' failurePolicy: Fail.
type Watcher struct {
	dir   string
	ready <-chan struct{}
	cw    atomic.Pointer[certwatcher.CertWatcher]
}

// NewWatcher returns a Watcher for dir that starts reading once ready is closed.
func NewWatcher(dir string, ready <-chan struct{}) *Watcher {
	return &Watcher{dir: dir, ready: ready}
}

// GetCertificate is for tls.Config.GetCertificate.
func (w *Watcher) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	cw := w.cw.Load()
	if cw == nil {
		return nil, errors.New("webhook serving certificates are not ready yet")
	}
	return cw.GetCertificate(hello)
}

// Start implements manager.Runnable: it waits for the certificates, then watches them for rotation.
func (w *Watcher) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-w.ready:
	}
	cw, err := certwatcher.New(filepath.Join(w.dir, certName), filepath.Join(w.dir, keyName))
	if err != nil {
		return fmt.Errorf("reading webhook certificates: %w", err)
	}
	w.cw.Store(cw)
	ctrl.Log.WithName("certs").Info("serving webhook certificates", "dir", w.dir)
	return cw.Start(ctx)
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica serves webhooks.
func (w *Watcher) NeedLeaderElection() bool { return false }
