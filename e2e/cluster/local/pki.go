package local

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// PKI is the cluster's key material, PEM-encoded. Pods verify the API server against CACert (the
// controller manager publishes it as kube-root-ca.crt), so the serving certificate must chain to it
// and name every address a client dials: the bridge address, the `kubernetes` ClusterIP, and the
// Service's DNS names.
type PKI struct {
	CACert, ServingCert, ServingKey []byte
	// ServiceAccountKey signs service account tokens.
	ServiceAccountKey []byte
}

// validity outlives any test run; the CA is thrown away with the cluster.
const validity = 7 * 24 * time.Hour

func newPKI(p Plan, now time.Time) (PKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PKI{}, err
	}
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mlkube-local-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return PKI{}, err
	}
	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PKI{}, err
	}
	serving := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP(p.HostIP.String()), net.ParseIP(p.APIServiceIP.String()), net.IPv4(127, 0, 0, 1)},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, serving, ca, &servingKey.PublicKey, caKey)
	if err != nil {
		return PKI{}, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PKI{}, err
	}
	out := PKI{CACert: pemBlock("CERTIFICATE", caDER), ServingCert: pemBlock("CERTIFICATE", servingDER)}
	if out.ServingKey, err = keyPEM(servingKey); err != nil {
		return PKI{}, err
	}
	if out.ServiceAccountKey, err = keyPEM(saKey); err != nil {
		return PKI{}, err
	}
	return out, nil
}

func keyPEM(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
