package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// ServingCheck passes while w serves a certificate that the API server trusts: one that chains,
// for dnsName and now, to the CA of the Secret, which the rotator injects into the webhook
// configurations. With two replicas a CA rotation reaches each replica's files a little later
// than the webhook configurations; until it does, this check keeps that replica out of the
// webhook Service instead of letting it fail the API server's handshakes.
func ServingCheck(w *Watcher, secrets client.Reader, secret types.NamespacedName, dnsName string) healthz.Checker {
	return func(req *http.Request) error {
		cert, err := w.GetCertificate(nil) // what every handshake presents
		if err != nil {
			return err
		}
		ca, err := secretCA(req.Context(), secrets, secret)
		if err != nil {
			return err
		}
		return verifyServing(cert, ca, dnsName, time.Now())
	}
}

func secretCA(ctx context.Context, secrets client.Reader, key types.NamespacedName) ([]byte, error) {
	var s corev1.Secret
	if err := secrets.Get(ctx, key, &s); err != nil {
		return nil, fmt.Errorf("reading the certificate Secret: %w", err)
	}
	return s.Data[caName], nil
}

// verifyServing reports why cert would fail a client that trusts only caPEM and dials dnsName.
func verifyServing(cert *tls.Certificate, caPEM []byte, dnsName string, now time.Time) error {
	if cert == nil || len(cert.Certificate) == 0 {
		return errors.New("no webhook serving certificate is loaded")
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return fmt.Errorf("parsing the served certificate: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return errors.New("the certificate Secret holds no CA yet")
	}
	_, err = leaf.Verify(x509.VerifyOptions{
		DNSName: dnsName, Roots: roots, CurrentTime: now,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return fmt.Errorf("the served certificate is not valid under the Secret's CA: %w", err)
	}
	return nil
}
