package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/noderun"
	"github.com/mlkube/mlkube/internal/objectstore"
	"github.com/mlkube/mlkube/internal/status"
)

// The agents read each namespace's store keys from its one Secret of them, and no other Secret
// (docs/design/object-stores.md).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get,resourceNames=mlkube-object-stores

// StoreSecrets returns the data of the Secret etlv1alpha1.ObjectStoreSecretName of a namespace;
// its error carries the status of the API server's answer (404 for none).
type StoreSecrets func(ctx context.Context, namespace string) (map[string][]byte, error)

// runStores opens the ObjectStores runs read from, with the keys of the run's namespace, each
// dialled within the agent's egress policy for stores.
type runStores struct{ a *Agent }

var _ noderun.Stores = runStores{}

func (s runStores) Open(ctx context.Context, ns string, st wire.RunStore) (noderun.Store, error) {
	c, err := s.a.openStore(ctx, ns, st.Name, &st.Spec)
	if err != nil {
		return nil, err
	}
	return runStore{c}, nil
}

// openStore is a client of ObjectStore name of namespace ns with the keys of ns's Secret, dialled
// within the agent's egress policy for stores, once it has reached the bucket.
func (a *Agent) openStore(ctx context.Context, ns, name string, spec *etlv1alpha1.ObjectStoreSpec) (*objectstore.Store, error) {
	var data map[string][]byte
	if !spec.Anonymous {
		if a.opts.StoreSecrets == nil {
			return nil, fmt.Errorf("ObjectStore %s: this agent reads no Secrets, so no store keys", name)
		}
		var err error
		if data, err = a.opts.StoreSecrets(ctx, ns); err != nil {
			if status.Of(err) == http.StatusNotFound {
				return nil, fmt.Errorf("ObjectStore %s: namespace %s has no Secret %s, which holds its stores' keys; create it", name, ns, etlv1alpha1.ObjectStoreSecretName)
			}
			return nil, fmt.Errorf("ObjectStore %s: reading the Secret %s: %w", name, etlv1alpha1.ObjectStoreSecretName, err)
		}
	}
	keys, err := objectstore.KeysFrom(name, spec, data)
	if err != nil {
		return nil, err
	}
	c, err := objectstore.New(name, spec, keys, a.opts.Stores, a.limits.largePuts.For(ns))
	if err != nil {
		return nil, err
	}
	if err := c.Check(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// runStore is a store client as a run sees it: missing objects answer 404, a store that cannot
// be used 502.
type runStore struct{ c *objectstore.Store }

func (s runStore) List(ctx context.Context, prefix string, max int, fn func(string, int64) error) error {
	return s.c.List(ctx, prefix, max, func(o objectstore.Object) error { return fn(o.Key, o.Size) })
}

func (s runStore) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	body, size, err := s.c.Get(ctx, key)
	switch {
	case errors.Is(err, objectstore.ErrNotFound):
		return nil, 0, status.NotFound(err)
	case err != nil:
		return nil, 0, status.With(http.StatusBadGateway, err)
	}
	return body, size, nil
}

func (s runStore) Presign(ctx context.Context, key string, d time.Duration) (string, error) {
	u, err := s.c.Presign(ctx, key, d)
	if err != nil {
		return "", status.With(http.StatusBadGateway, err)
	}
	return u, nil
}

func (s runStore) Exists(ctx context.Context, key string) (bool, error) {
	ok, err := s.c.Exists(ctx, key)
	if err != nil {
		return false, status.With(http.StatusBadGateway, err)
	}
	return ok, nil
}

func (s runStore) Put(ctx context.Context, key string, r io.Reader) error {
	if err := s.c.Put(ctx, key, r, -1); err != nil {
		return status.With(http.StatusBadGateway, err)
	}
	return nil
}

// SecretsOf reads the store keys through the API server, one Secret by name.
func SecretsOf(secrets corev1client.SecretsGetter) StoreSecrets {
	return func(ctx context.Context, ns string) (map[string][]byte, error) {
		s, err := secrets.Secrets(ns).Get(ctx, etlv1alpha1.ObjectStoreSecretName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, status.NotFound(err)
		case err != nil:
			return nil, err
		}
		return s.Data, nil
	}
}
