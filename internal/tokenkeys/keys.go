// Package tokenkeys holds the manager's side of the cluster keys that transformer credentials are
// derived with (internal/transformertoken): it creates the key Secret at start when it does not
// exist, and reads the current key for the Transform controller. The manager reads that one Secret
// by name and no other Secret of the agents' namespace.
package tokenkeys

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/internal/transformertoken"
)

// Creating the Secret is allowed by the ClusterRole's create on secrets, which the Transform
// controller needs for every namespace's token Secrets; reading is allowed for this one name only.
// +kubebuilder:rbac:groups="",namespace=mlkube-datapath,resources=secrets,resourceNames=transformer-token-keys,verbs=get

// Source reads the key Secret through a client that does not cache (the manager may not list or
// watch Secrets), at most once per MaxAge: a key an admin adds reaches new transformer pods within
// that time.
type Source struct {
	// Client reads and creates the Secret; an uncached reader (the manager's API reader) for Get.
	Reader client.Reader
	Writer client.Writer
	// Namespace is the agents' namespace, where the Secret lives.
	Namespace string
	// MaxAge is how long a read key set is used; 0 means a minute.
	MaxAge time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// RetryAfter is Start's first wait after a failure; 0 means a second.
	RetryAfter time.Duration

	mu      sync.Mutex
	set     transformertoken.Set
	fetched time.Time
}

func (s *Source) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Start creates the Secret when it does not exist: the agents' pods mount it, and do not start
// before it is there. It is a manager Runnable, run by every replica (creating is idempotent).
// A failure is logged and tried again, backing off from RetryAfter to maxRetryAfter, until it
// succeeds or the manager stops: at install the manager can start before the Role that lets it
// read the Secret, or the agents' namespace, is created or known to the API server's authorizer
// (forbidden, not found), and gave up there once, leaving every agent waiting until the first
// Transform asked again. The Transform controller still asks before it creates pods, and reports
// an error on the Transform.
func (s *Source) Start(ctx context.Context) error {
	wait := s.RetryAfter
	if wait <= 0 {
		wait = time.Second
	}
	for {
		_, _, err := s.Current(ctx)
		if err == nil {
			return nil
		}
		log.FromContext(ctx).Error(err, "transformer token keys are not available yet; the node agents wait for them", "retryAfter", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, maxRetryAfter)
	}
}

// maxRetryAfter bounds Start's backoff: an admin's fix (a Role, the namespace) is picked up within it.
const maxRetryAfter = 30 * time.Second

// NeedLeaderElection: every replica may need the key, and creating the Secret twice is harmless.
func (s *Source) NeedLeaderElection() bool { return false }

// Current returns the current key, creating the Secret with a first key k1 if there is none.
func (s *Source) Current(ctx context.Context) (id string, key []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	maxAge := s.MaxAge
	if maxAge == 0 {
		maxAge = time.Minute
	}
	if s.fetched.IsZero() || s.now().Sub(s.fetched) >= maxAge {
		set, err := s.fetch(ctx)
		if err != nil {
			return "", nil, err
		}
		s.set, s.fetched = set, s.now()
	}
	id, key = s.set.Current()
	return id, key, nil
}

func (s *Source) fetch(ctx context.Context) (transformertoken.Set, error) {
	name := types.NamespacedName{Namespace: s.Namespace, Name: transformertoken.SecretName}
	var secret corev1.Secret
	err := s.Reader.Get(ctx, name, &secret)
	if apierrors.IsNotFound(err) {
		secret, err = s.create(ctx)
	}
	if err != nil {
		return transformertoken.Set{}, fmt.Errorf("secret %s: %w", name, err)
	}
	set, err := transformertoken.Parse(secret.Data)
	if err != nil {
		return transformertoken.Set{}, fmt.Errorf("secret %s: %w; add a key k<N> of %d random bytes", name, err, transformertoken.KeySize)
	}
	return set, nil
}

// create makes the Secret with k1 from crypto/rand; another replica that created it first wins,
// and its Secret is read.
func (s *Source) create(ctx context.Context) (corev1.Secret, error) {
	secret := corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: transformertoken.SecretName,
			Labels: map[string]string{labels.Name: "mlkube", labels.Component: "transformer-token-keys"}},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"k1": randomKey()},
	}
	err := s.Writer.Create(ctx, &secret)
	if apierrors.IsAlreadyExists(err) {
		err = s.Reader.Get(ctx, client.ObjectKeyFromObject(&secret), &secret)
	}
	return secret, err
}

func randomKey() []byte {
	k := make([]byte, transformertoken.KeySize)
	rand.Read(k) // never fails (crypto/rand)
	return k
}
