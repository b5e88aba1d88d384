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
	// The API server's front proxy: it presents FrontProxyClientCert when it proxies a request to
	// an aggregated API server (metrics-server), which trusts the user it names in its headers
	// only from a client that FrontProxyCACert issued. A CA of its own, as kubeadm makes: no other
	// certificate can pass for the proxy.
	FrontProxyCACert, FrontProxyClientCert, FrontProxyClientKey []byte
}

// frontProxyClientName is the front proxy's certificate name, the one name aggregated API servers
// accept request headers from (--requestheader-allowed-names).
const frontProxyClientName = "front-proxy-client"

// validity outlives any test run; the CA is thrown away with the cluster.
const validity = 7 * 24 * time.Hour

func newPKI(p Plan, now time.Time) (PKI, error) {
	ca, caKey, caPEM, err := newCA("mlkube-local-ca", now)
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
	out := PKI{CACert: caPEM}
	if out.ServingCert, out.ServingKey, err = issue(serving, ca, caKey); err != nil {
		return PKI{}, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return PKI{}, err
	}
	if out.ServiceAccountKey, err = keyPEM(saKey); err != nil {
		return PKI{}, err
	}
	fpCA, fpKey, fpPEM, err := newCA("mlkube-front-proxy-ca", now)
	if err != nil {
		return PKI{}, err
	}
	client := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: frontProxyClientName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	out.FrontProxyCACert = fpPEM
	if out.FrontProxyClientCert, out.FrontProxyClientKey, err = issue(client, fpCA, fpKey); err != nil {
		return PKI{}, err
	}
	return out, nil
}

// newCA is a self-signed CA named cn, its key, and its certificate as PEM.
func newCA(cn string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	// Parsed back: a parent must carry the subject key ID CreateCertificate filled in.
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	return ca, key, pemBlock("CERTIFICATE", der), nil
}

// issue signs tmpl with a new key by ca and returns the certificate and key as PEM.
func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (certPEM, keyPEMBytes []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	if keyPEMBytes, err = keyPEM(key); err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), keyPEMBytes, nil
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
