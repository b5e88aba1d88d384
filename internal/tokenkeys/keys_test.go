package tokenkeys

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/internal/transformertoken"
)

const ns = "mlkube-datapath"

func source(c client.Client, now *time.Time) *Source {
	return &Source{Reader: c, Writer: c, Namespace: ns, Now: func() time.Time { return *now }}
}

func TestCurrentCreatesTheSecretWithARandomFirstKey(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	now := time.Now()
	id, key, err := source(c, &now).Current(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if id != "k1" || len(key) != transformertoken.KeySize || bytes.Equal(key, make([]byte, transformertoken.KeySize)) {
		t.Errorf("first key %s %x, want k1 of %d random bytes", id, key, transformertoken.KeySize)
	}
	var stored corev1.Secret
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: transformertoken.SecretName}, &stored); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored.Data["k1"], key) {
		t.Error("the stored key differs from the one returned")
	}
	// Another replica's Source reads the Secret the first made, and gets the same key.
	if _, again, err := source(c, &now).Current(t.Context()); err != nil || !bytes.Equal(again, key) {
		t.Errorf("second replica: %x, %v; want the same key", again, err)
	}
}

func TestCurrentFollowsRotationAfterMaxAge(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: transformertoken.SecretName}, Data: map[string][]byte{"k1": k1}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(secret).Build()
	now := time.Now()
	s := source(c, &now)
	if id, _, _ := s.Current(t.Context()); id != "k1" {
		t.Fatalf("current %s, want k1", id)
	}
	secret.Data["k2"] = k2
	if err := c.Update(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := s.Current(t.Context()); id != "k1" {
		t.Errorf("within MaxAge: %s, want the cached k1", id)
	}
	now = now.Add(time.Minute)
	if id, key, _ := s.Current(t.Context()); id != "k2" || !bytes.Equal(key, k2) {
		t.Errorf("after MaxAge: %s, want k2", id)
	}
}

func TestCurrentNamesTheSecretWhenItHoldsNoKey(t *testing.T) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: transformertoken.SecretName}, Data: map[string][]byte{"k1": []byte("short")}}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(secret).Build()
	now := time.Now()
	_, _, err := source(c, &now).Current(context.Background())
	if err == nil || !strings.Contains(err.Error(), "mlkube-datapath/transformer-token-keys") || !strings.Contains(err.Error(), "k1 has 5 bytes") {
		t.Errorf("Current = %v, want an error naming the Secret and the short key", err)
	}
}
