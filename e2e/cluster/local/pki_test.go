package local

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

// TestServingCertVerifiesForEveryClientAddress: what a pod, a kubelet or the test dials must
// verify against the CA the cluster publishes.
func TestServingCertVerifiesForEveryClientAddress(t *testing.T) {
	p, err := NewPlan(2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	pki, err := newPKI(p, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(pki.ServingCert, pki.ServingKey); err != nil {
		t.Fatalf("serving cert and key do not match: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pki.CACert) {
		t.Fatal("CA certificate does not parse")
	}
	block, _ := pem.Decode(pki.ServingCert)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{p.HostIP.String(), p.APIServiceIP.String(), "127.0.0.1",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"} {
		opts := x509.VerifyOptions{Roots: roots, DNSName: name, CurrentTime: now}
		if _, err := cert.Verify(opts); err != nil {
			t.Errorf("verify for %s: %v", name, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: "example.com", CurrentTime: now}); err == nil {
		t.Error("serving cert verifies for a name it must not cover")
	}
	if block, _ := pem.Decode(pki.ServiceAccountKey); block == nil {
		t.Error("service account key is not PEM")
	} else if _, err := x509.ParseECPrivateKey(block.Bytes); err != nil {
		t.Errorf("service account key: %v", err)
	}
}

// TestFrontProxyClientCert: aggregated API servers (metrics-server) accept the API server's proxied
// requests only from a client certificate of the front proxy's CA, named as
// --requestheader-allowed-names says; the cluster CA must not issue it, nor the front proxy's CA
// verify the cluster's serving certificate.
func TestFrontProxyClientCert(t *testing.T) {
	p, err := NewPlan(2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	pki, err := newPKI(p, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.X509KeyPair(pki.FrontProxyClientCert, pki.FrontProxyClientKey); err != nil {
		t.Fatalf("front proxy cert and key do not match: %v", err)
	}
	parse := func(certPEM []byte) *x509.Certificate {
		t.Helper()
		block, _ := pem.Decode(certPEM)
		if block == nil {
			t.Fatal("certificate is not PEM")
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return cert
	}
	pool := func(certPEM []byte) *x509.CertPool {
		p := x509.NewCertPool()
		p.AppendCertsFromPEM(certPEM)
		return p
	}
	client := parse(pki.FrontProxyClientCert)
	if client.Subject.CommonName != frontProxyClientName {
		t.Errorf("front proxy cert is named %q, want %q", client.Subject.CommonName, frontProxyClientName)
	}
	clientAuth := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if _, err := client.Verify(x509.VerifyOptions{Roots: pool(pki.FrontProxyCACert), KeyUsages: clientAuth, CurrentTime: now}); err != nil {
		t.Errorf("front proxy cert does not verify as a client of its CA: %v", err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: pool(pki.CACert), KeyUsages: clientAuth, CurrentTime: now}); err == nil {
		t.Error("front proxy cert verifies against the cluster CA; it must have a CA of its own")
	}
	serving := parse(pki.ServingCert)
	if _, err := serving.Verify(x509.VerifyOptions{Roots: pool(pki.FrontProxyCACert), CurrentTime: now}); err == nil {
		t.Error("the front proxy CA verifies the API server's serving cert")
	}
}
