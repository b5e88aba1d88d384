package transform

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// The store origins of a Transform whose transformers read the store themselves
// (docs/design/object-stores.md, "Transformers reading the store themselves"): the node agent
// hands them presigned GETs, and they fetch only from the origins listed next to their token.

// storesFieldManager owns the stores key of the token Secrets, apart from the token's
// fieldManager: rewriting the list then needs neither the token nor the key it is derived from,
// and each write leaves the other's key as it is.
const storesFieldManager = "mlkube-manager-stores"

// takesStoreURLs says whether t's transformers may be handed presigned GETs of its namespace's
// stores: hpull transformers of argument url, the agent's rule.
func takesStoreURLs(t *v1alpha1.Transform) bool {
	return t.Spec.Communication == v1alpha1.CommHPull && t.Spec.Argument == v1alpha1.ArgURL
}

// storeOrigins are the origins of a namespace's ObjectStores, sorted, once each, the first
// wire.MaxStoreOrigins of them (the transformer refuses a longer list whole). A store with a CA
// bundle of its own is left out: a transformer trusts only the system's roots, so the agent
// presigns nothing for it and relays its objects. So is an endpoint StoreOrigin refuses, which
// the webhook would have refused too.
func storeOrigins(stores []v1alpha1.ObjectStore) []string {
	var origins []string
	for _, s := range stores {
		if s.Spec.CABundle != "" {
			continue
		}
		o, err := wire.StoreOrigin(s.Spec.Endpoint, s.Spec.Bucket, s.Spec.Addressing == v1alpha1.AddressingVirtualHost)
		if err == nil {
			origins = append(origins, o)
		}
	}
	slices.Sort(origins)
	origins = slices.Compact(origins)
	return origins[:min(len(origins), wire.MaxStoreOrigins)]
}

// storesFile is the stores key's value, one origin a line as the transformer reads them. No
// origin is an empty value, not a missing key: a store removed must disappear from the file.
func storesFile(origins []string) []byte {
	if len(origins) == 0 {
		return []byte{}
	}
	return []byte(strings.Join(origins, "\n") + "\n")
}

// storesWriter applies the stores key to the token Secrets, and skips a Secret whose list this
// manager already wrote there: a namespace's store events requeue all its pulling Transforms.
type storesWriter struct {
	mu sync.Mutex
	// written is the digest of the value last written, by Transform (so that forget drops a
	// Transform's entries at once) and token Secret.
	written map[types.NamespacedName]map[storesSecret][sha256.Size]byte
}

// storesSecret is a Transform's token Secret under keyID (so a key rotation, which names a new
// Secret, is written anew) for the Transform of uid (so is one created again under the same
// name).
type storesSecret struct {
	uid   types.UID
	keyID string
}

// apply writes origins as the stores key of t's token Secret under keyID, unless this writer
// wrote the same list there last and always is unset. It patches the Secret and never creates
// one: a Secret is the token's, whose apply makes it controlled by t, so none is left behind
// without an owner, and the token's apply owns the owner reference alone (an apply owns each
// reference whole, so had this one applied it too, a Transform created again under the same name
// would find the old one's still held here, and the API server refuses a second controller). A
// Secret that is gone is written with its token before the next pod that mounts it is created.
func (w *storesWriter) apply(ctx context.Context, c client.Client, t *v1alpha1.Transform, keyID string, origins []string, always bool) error {
	name, k := client.ObjectKeyFromObject(t), storesSecret{t.UID, keyID}
	data := storesFile(origins)
	digest := sha256.Sum256(data)
	if last, ok := w.last(name, k); ok && last == digest && !always {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"data": map[string][]byte{wire.TransformerStoresKey: data}})
	if err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: tokenSecretName(t, keyID)}}
	err = c.Patch(ctx, secret, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(storesFieldManager))
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case apierrors.IsNotFound(err):
		delete(w.written[name], k)
		return nil
	case err != nil:
		delete(w.written[name], k) // what the Secret holds is unknown now
		return fmt.Errorf("writing the store origins into the token Secret %s/%s: %w", t.Namespace, secret.Name, err)
	}
	if w.written == nil {
		w.written = map[types.NamespacedName]map[storesSecret][sha256.Size]byte{}
	}
	if w.written[name] == nil {
		w.written[name] = map[storesSecret][sha256.Size]byte{}
	}
	w.written[name][k] = digest
	return nil
}

// last is the digest of what was last written to k of Transform name, if anything was.
func (w *storesWriter) last(name types.NamespacedName, k storesSecret) ([sha256.Size]byte, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.written[name][k]
	return d, ok
}

// forget drops the entries of the Transform name, which is gone or going, so that the writer
// holds live Transforms only.
func (w *storesWriter) forget(name types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, name)
}

// podKeyIDs are the keys the transformer pods' tokens are derived with: each pod mounts the token
// Secret of its key.
func podKeyIDs(pods []corev1.Pod) []string {
	var ids []string
	for _, p := range pods {
		if id := p.Annotations[v1alpha1.AnnotationTokenKey]; id != "" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// listStoreOrigins lists the origins of t's namespace's stores when t takes store URLs, nil
// otherwise, without asking the API.
func (r *Reconciler) listStoreOrigins(ctx context.Context, t *v1alpha1.Transform) ([]string, error) {
	if !takesStoreURLs(t) {
		return nil, nil
	}
	var stores v1alpha1.ObjectStoreList
	if err := r.List(ctx, &stores, client.InNamespace(t.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the ObjectStores of namespace %s: %w", t.Namespace, err)
	}
	return storeOrigins(stores.Items), nil
}

// applyStores writes origins next to the tokens of t's running pods when t takes store URLs.
func (r *Reconciler) applyStores(ctx context.Context, t *v1alpha1.Transform, pods []corev1.Pod, origins []string) error {
	if !takesStoreURLs(t) {
		return nil
	}
	var errs []error
	for _, keyID := range podKeyIDs(pods) {
		errs = append(errs, r.stores.apply(ctx, r.Client, t, keyID, origins, false))
	}
	return errors.Join(errs...)
}

// pullingTransforms requeues the Transforms of an ObjectStore's namespace that take store URLs:
// their stores files list the namespace's stores.
func (r *Reconciler) pullingTransforms(ctx context.Context, store client.Object) []reconcile.Request {
	var list v1alpha1.TransformList
	if err := r.List(ctx, &list, client.InNamespace(store.GetNamespace())); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		if takesStoreURLs(&list.Items[i]) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}
