package tokenkeys

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

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

// refusingGets is a fake client whose first refusals Gets are forbidden, as at install when the
// manager starts before its Role in the agents' namespace counts; cancel, when set, is called at
// the last refusal's Get.
func refusingGets(refusals int, cancel func()) (client.Client, *int) {
	gets := 0
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets++
			if gets <= refusals {
				if gets == refusals && cancel != nil {
					cancel()
				}
				return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, key.Name, errors.New("RBAC: not yet"))
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	return c, &gets
}

// TestStartTriesUntilTheSecretIsThere: refused twice, Start tries again and creates the Secret
// the agents' pods wait for, rather than giving up at the first refusal.
func TestStartTriesUntilTheSecretIsThere(t *testing.T) {
	c, gets := refusingGets(2, nil)
	now := time.Now()
	s := source(c, &now)
	s.RetryAfter = time.Millisecond
	// The deadline only keeps a broken Start from hanging the test; its result is checked below.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var stored corev1.Secret
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: transformertoken.SecretName}, &stored); err != nil {
		t.Fatalf("after Start: %v; want the Secret created once the refusals ended", err)
	}
	if len(stored.Data["k1"]) != transformertoken.KeySize {
		t.Errorf("stored Secret %v, want k1", stored.Data)
	}
	if *gets != 4 { // two refused, the NotFound before the create, the check above
		t.Errorf("%d Gets, want 4", *gets)
	}
}

// TestStartStopsWithTheManager: refused for as long as the manager runs, Start returns when it
// stops, with no error (the manager goes on without keys; Transforms report the refusal).
func TestStartStopsWithTheManager(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	c, gets := refusingGets(3, cancel)
	now := time.Now()
	s := source(c, &now)
	s.RetryAfter = time.Millisecond
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if *gets != 3 {
		t.Errorf("%d Gets, want 3: tried until the manager stopped", *gets)
	}
}
