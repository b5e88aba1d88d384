package kubetest

import (
	"bytes"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CheckCABundles reports every webhook of the mutating and validating configurations named
// whose clientConfig does not carry ca, the CA of the manager's certificate Secret: the API
// server trusts the webhook server only through it.
func (c Client) CheckCABundles(t testing.TB, mutating, validating string, ca []byte) {
	t.Helper()
	var m admissionregistrationv1.MutatingWebhookConfiguration
	c.MustGet(t, client.ObjectKey{Name: mutating}, &m)
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	c.MustGet(t, client.ObjectKey{Name: validating}, &v)
	for _, w := range m.Webhooks {
		if !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("mutating webhook %s lacks the CA bundle of the certificate Secret", w.Name)
		}
	}
	for _, w := range v.Webhooks {
		if !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("validating webhook %s lacks the CA bundle of the certificate Secret", w.Name)
		}
	}
}
