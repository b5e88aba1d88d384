package transformer

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/mlkube/mlkube/api/wire"
)

// Func transforms one object. It reads the object from in and returns the
// result, which the SDK reads to its end and then closes if it is an
// io.Closer (so a Func may return a pipe or a file).
//
// ctx ends when the object is answered or its client goes away; a Func that
// works in the background must stop then. in is valid only until the result
// has been read: the SDK discards whatever the Func left unread and reuses the
// connection for the next object. args are the request's arguments, object
// its name (for information: the bytes come from in). Funcs run concurrently,
// one per HTTP request and one per WebSocket connection.
//
// An error fails the object with status 500, or with the status given by
// StatusError; its text is the message the client receives.
type Func func(ctx context.Context, in io.Reader, object, args string) (io.Reader, error)

// Handler serves a Func over every mechanism of the wire contract.
type Handler struct {
	fn       Func
	root     *os.Root // nil: fqn requests are refused
	client   *http.Client
	log      *slog.Logger
	sessions sessions
	// shutdownTimeout bounds Serve's graceful shutdown.
	shutdownTimeout time.Duration
	// cred is the node agent's credential every request but GET /health must carry; nil
	// (WithoutAuth) serves anyone.
	cred credential
	// credWarned is the last reason for refusing every request that was logged.
	credWarned atomic.Pointer[string]
	// stores lists the origins an hpull src may be on besides the caller's in-flight URLs; nil
	// lists none.
	stores *storesFile
}

var _ http.Handler = (*Handler)(nil)

// New returns a Handler for fn. It fails when the fqn root is set but cannot
// be opened, so a misconfigured transformer stops at start-up, where the
// controller reports it, rather than on the first object. It also fails when
// it has no way to know the node agent's credential (wire.EnvTokenFile unset,
// no WithTokenFile or WithToken) unless WithoutAuth says to serve anyone.
func New(fn Func, opts ...Option) (*Handler, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	cred, err := newCredential(o)
	if err != nil {
		return nil, err
	}
	h := &Handler{fn: fn, client: o.client, log: o.log, shutdownTimeout: o.shutdownTimeout, cred: cred}
	h.sessions.init()
	if path := storesPath(o); path != "" {
		h.stores = newStoresFile(path)
	}
	if o.fqnRoot != "" {
		dir, err := filepath.Abs(o.fqnRoot)
		if err != nil {
			return nil, fmt.Errorf("fqn root: %w", err)
		}
		if h.root, err = os.OpenRoot(dir); err != nil {
			return nil, fmt.Errorf("fqn root: %w", err)
		}
	}
	return h, nil
}

// ServeHTTP routes a request to the health check, the WebSocket session or the
// object transformation. Every request but the health check must carry the
// node agent's credential, checked before anything else is looked at: before
// a WebSocket is accepted, a file opened or a URL fetched.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isHealth(r) && !h.authorize(r) {
		refuse(w, r)
		return
	}
	req, err := route(r.Method, r.URL.EscapedPath(), r.URL.Query(), r.ContentLength)
	if err != nil {
		writeError(w, err)
		return
	}
	switch req.kind {
	case kindHealth:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, wire.HealthOK) // a client that went away has nothing to be told
	case kindWS:
		h.serveWS(w, r)
	default:
		r, cancel, err := withObjectTimeout(r)
		if err != nil {
			writeError(w, badRequest(err))
			return
		}
		defer cancel()
		h.serveObject(w, r, req)
	}
}

// withObjectTimeout bounds r's context by the time the agent still waits for
// the object (wire.HeaderObjectTimeout), so that the Func, a command of the
// io shim, or an hpull fetch is stopped when the agent gives up. Without it,
// a Func that stops reading a large body would never learn that: net/http
// notices a closed connection only after the body has been read to its end.
// A request without the header (a test's, or an older agent's) keeps its
// context as it is.
func withObjectTimeout(r *http.Request) (*http.Request, context.CancelFunc, error) {
	v := r.Header.Get(wire.HeaderObjectTimeout)
	if v == "" {
		return r, func() {}, nil
	}
	d, err := wire.ParseObjectTimeout(v)
	if err != nil {
		return r, nil, err
	}
	ctx, cancel := context.WithTimeoutCause(r.Context(), d, fmt.Errorf("the agent's object timeout of %s passed: %w", d, context.DeadlineExceeded))
	return r.WithContext(ctx), cancel, nil
}
