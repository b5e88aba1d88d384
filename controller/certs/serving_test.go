package certs

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
)

const testDNSName = "mlkube-webhook-service.mlkube-system.svc"

// issue makes a CA and a serving keypair the way the rotator does, valid from now for a day.
func issue(t *testing.T, now time.Time) (caPEM []byte, serving *tls.Certificate) {
	t.Helper()
	r := &rotator.CertRotator{CAName: "mlkube-ca", CAOrganization: "mlkube", DNSName: testDNSName,
		ExtKeyUsages: &[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	ca, err := r.CreateCACert(now, now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	crt, key, err := r.CreateCertPEM(ca, now, now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	return ca.CertPEM, &pair
}

func TestVerifyServing(t *testing.T) {
	now := time.Now()
	ca, serving := issue(t, now)
	otherCA, _ := issue(t, now)
	cases := map[string]struct {
		cert    *tls.Certificate
		ca      []byte
		dnsName string
		at      time.Time
		wantErr string // "" for valid
	}{
		"signed by the Secret's CA":      {cert: serving, ca: ca, dnsName: testDNSName, at: now},
		"nothing loaded":                 {cert: nil, ca: ca, dnsName: testDNSName, at: now, wantErr: "no webhook serving certificate"},
		"the Secret not yet filled":      {cert: serving, ca: nil, dnsName: testDNSName, at: now, wantErr: "holds no CA yet"},
		"signed by a CA rotated away":    {cert: serving, ca: otherCA, dnsName: testDNSName, at: now, wantErr: "not valid under the Secret's CA"},
		"for another Service":            {cert: serving, ca: ca, dnsName: "other.mlkube-system.svc", at: now, wantErr: "not valid under the Secret's CA"},
		"expired (rotation fell behind)": {cert: serving, ca: ca, dnsName: testDNSName, at: now.Add(25 * time.Hour), wantErr: "not valid under the Secret's CA"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := verifyServing(tc.cert, tc.ca, tc.dnsName, tc.at)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("got %v; want an error containing %q", err, tc.wantErr)
			}
		})
	}
}
