package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/status"
)

// The agents read an ObjectStore when a caller lists it: the caller names the store, never its
// endpoint, so the namespace's keys go only where the namespace declared.
// +kubebuilder:rbac:groups=etl.mlkube.io,resources=objectstores,verbs=get

// ObjectStoreSpecs returns the spec of ObjectStore name of a namespace; its error carries the
// status of the API server's answer (404 for none).
type ObjectStoreSpecs func(ctx context.Context, namespace, name string) (*etlv1alpha1.ObjectStoreSpec, error)

// ObjectStoresOf reads ObjectStores through r, one by name.
func ObjectStoresOf(r client.Reader) ObjectStoreSpecs {
	return func(ctx context.Context, ns, name string) (*etlv1alpha1.ObjectStoreSpec, error) {
		var st etlv1alpha1.ObjectStore
		err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &st)
		switch {
		case apierrors.IsNotFound(err):
			return nil, status.NotFound(fmt.Errorf("namespace %s has no ObjectStore %s: kubectl get objectstores -n %s lists the ones it has", ns, name, ns))
		case err != nil:
			return nil, fmt.Errorf("reading ObjectStore %s: %w", name, err)
		}
		return &st.Spec, nil
	}
}

// maxStoreLists bounds the listings of ObjectStores one agent makes at once: each reads an
// ObjectStore and a Secret from the API server and lists a bucket, and a caller who may get a
// store could otherwise make the agent do that without end.
const maxStoreLists = 4

// storePath is a parsed /v1/stores/{namespace}/{store}/.
type storePath struct{ namespace, store string }

func parseStorePath(escapedPath string) (storePath, error) {
	rest, _ := strings.CutPrefix(escapedPath, wire.PathStores)
	ns, rest, _ := strings.Cut(rest, "/")
	store, rest, ok := strings.Cut(rest, "/")
	if !ok || rest != "" {
		return storePath{}, fmt.Errorf("path %q: want %s{namespace}/{store}/ to list an ObjectStore", escapedPath, wire.PathStores)
	}
	var p storePath
	var err error
	if p.namespace, err = parseNamespace(ns); err != nil {
		return storePath{}, err
	}
	p.store = unescape(store)
	if err := checkName("ObjectStore", p.store, validation.DNS1123SubdomainMaxLength, validation.IsDNS1123Subdomain); err != nil {
		return storePath{}, err
	}
	return p, nil
}

// serveStoreList answers GET /v1/stores/{namespace}/{store}/ with a page of the store's objects,
// read with the namespace's keys, for a caller RBAC lets get the ObjectStore.
func (a *Agent) serveStoreList(w http.ResponseWriter, r *http.Request) {
	fail := func(err error) {
		writeError(w, status.Of(err), Error{Error: status.Message(err), Node: a.opts.Node})
	}
	p, err := parseStorePath(r.URL.EscapedPath())
	if err != nil {
		fail(status.BadRequest(err))
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		fail(status.With(http.StatusMethodNotAllowed, fmt.Errorf("method %s: %s{namespace}/{store}/ takes GET, to list", r.Method, wire.PathStores)))
		return
	}
	q, err := parseListQuery(r.URL.Query())
	if err == nil && q.delimiter != "" && q.delimiter != "/" {
		err = fmt.Errorf("%s=%q: a store's listing groups names at \"/\" or not at all", wire.QueryDelimiter, q.delimiter)
	}
	if err != nil {
		fail(status.BadRequest(err))
		return
	}
	if _, err := a.opts.Access.Check(r.Context(), r, access.Request{Verb: "get", Namespace: p.namespace, Resource: access.ResourceObjectStores, Name: p.store}); err != nil {
		fail(accessError(w, err))
		return
	}
	select {
	case a.storeLists <- struct{}{}:
		defer func() { <-a.storeLists }()
	default:
		w.Header().Set("Retry-After", "1")
		fail(status.With(http.StatusTooManyRequests, fmt.Errorf("this agent is listing %d ObjectStores already: try again in a second", maxStoreLists)))
		return
	}
	page, err := a.listStore(r.Context(), p, q)
	if err != nil {
		fail(err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// listStore reads the ObjectStore and a page of its objects; a store that cannot be used is a 502
// with the reason.
func (a *Agent) listStore(ctx context.Context, p storePath, q listQuery) (wire.ObjectList, error) {
	if a.opts.ObjectStores == nil {
		return wire.ObjectList{}, status.With(http.StatusNotImplemented, errors.New("this agent reads no ObjectStores"))
	}
	spec, err := a.opts.ObjectStores(ctx, p.namespace, p.store)
	if err != nil {
		return wire.ObjectList{}, err
	}
	c, err := a.openStore(ctx, p.namespace, p.store, spec)
	if err != nil {
		return wire.ObjectList{}, status.With(http.StatusBadGateway, err)
	}
	page, err := c.ListPage(ctx, q.prefix, q.delimiter, q.after, q.limit)
	if err != nil {
		return wire.ObjectList{}, status.With(http.StatusBadGateway, err)
	}
	l := wire.ObjectList{Items: make([]wire.ObjectInfo, 0, len(page.Objects)), Prefixes: page.Prefixes}
	last := ""
	for _, o := range page.Objects {
		l.Items = append(l.Items, wire.ObjectInfo{Name: o.Key, Size: o.Size, Modified: o.Modified})
		last = max(last, o.Key)
	}
	for _, pre := range page.Prefixes {
		last = max(last, pre)
	}
	if page.More {
		l.Next = last
	}
	return l, nil
}
