package certs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// secretSyncer copies the rotator's keypair from the Secret into the certificate directory.
type secretSyncer struct {
	client.Client
	secret types.NamespacedName
	dir    string
}

var _ reconcile.Reconciler = (*secretSyncer)(nil)

func (s *secretSyncer) setup(mgr ctrl.Manager) error {
	onlyOurs := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == s.secret.Namespace && o.GetName() == s.secret.Name
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("webhook-cert-syncer").
		For(&corev1.Secret{}, builder.WithPredicates(onlyOurs)).
		// Every replica serves webhooks, so every replica writes its own files.
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		Complete(s)
}

func (s *secretSyncer) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var secret corev1.Secret
	if err := s.Get(ctx, s.secret, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	crt, key := secret.Data[certName], secret.Data[keyName]
	if len(crt) == 0 || len(key) == 0 {
		return reconcile.Result{}, nil // the rotator has not filled it yet
	}
	// Key first: the certificate watcher reloads on the certificate, and must find the matching key.
	for _, f := range []struct {
		name string
		data []byte
		mode os.FileMode
	}{{keyName, key, 0o600}, {certName, crt, 0o644}} {
		if err := writeIfChanged(filepath.Join(s.dir, f.name), f.data, f.mode); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{}, nil
}

// writeIfChanged replaces path with data atomically (temporary file, then rename), so a reader
// never sees a half-written key or certificate.
func writeIfChanged(path string, data []byte, mode os.FileMode) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the certificate directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
