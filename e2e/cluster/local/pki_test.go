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
