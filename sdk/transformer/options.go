package transformer

import (
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/h1client"
)

// Option configures a Handler.
type Option func(*options)

type options struct {
	fqnRoot         string
	client          *http.Client
	log             *slog.Logger
	shutdownTimeout time.Duration
	// The agent's credential: tokenFile, or token when tokenSet, or none with withoutAuth.
	tokenFile   string
	token       string
	tokenSet    bool
	withoutAuth bool
	// storesFile lists the store origins when storesFileSet; otherwise storesPath derives it.
	storesFile    string
	storesFileSet bool
}

func defaultOptions() options {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// hpull fetches every object from the same node agent: keep more than the
	// default two idle connections to it so that concurrent objects reuse them.
	t.MaxIdleConnsPerHost = 64
	// hpull fetches only from the caller's in-flight URLs and the store origins (checkSrc): a
	// proxy from the pod's environment must not carry the fetch elsewhere, and a redirect must not
	// lead away from them.
	t.Proxy = nil
	// The fetches are bodiless GETs: they go on the agent's own lean
	// client, each on the object's goroutine, with net/http's transport
	// behind it for anything else.
	fetches := &h1client.Transport{
		Fallback: t, Dial: (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdlePerHost: t.MaxIdleConnsPerHost, IdleTimeout: t.IdleConnTimeout,
	}
	return options{
		fqnRoot:   os.Getenv(wire.EnvFQNRoot),
		tokenFile: os.Getenv(wire.EnvTokenFile),
		client: &http.Client{Transport: fetches, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		log: slog.Default(),
		// Below Kubernetes' default 30 s termination grace period, so that the
		// process exits on its own before it is killed.
		shutdownTimeout: 25 * time.Second,
	}
}

// WithFQNRoot sets the directory under which fqn paths may be opened,
// overriding the environment variable wire.EnvFQNRoot. An empty dir refuses
// every fqn request.
func WithFQNRoot(dir string) Option {
	return func(o *options) { o.fqnRoot = dir }
}

// WithLogger sets the logger; failed objects are logged at debug level, since
// the client receives their errors, and broken connections at warning level.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.log = l }
}

// WithShutdownTimeout bounds how long Serve waits, once its context ends, for
// objects in flight before it closes the remaining connections.
func WithShutdownTimeout(d time.Duration) Option {
	return func(o *options) { o.shutdownTimeout = d }
}

// WithTokenFile reads the node agent's credential from path, overriding the environment variable
// wire.EnvTokenFile that the controller sets. The file is read again when it changes; while it is
// missing or empty, every request but GET /health is refused.
func WithTokenFile(path string) Option {
	return func(o *options) { o.tokenFile, o.tokenSet, o.withoutAuth = path, false, false }
}

// WithToken sets the node agent's credential itself, for tests; an empty token refuses every
// request but GET /health.
func WithToken(token string) Option {
	return func(o *options) { o.token, o.tokenSet, o.withoutAuth = token, true, false }
}

// WithoutAuth serves every client that reaches the port, for local experiments only: in a
// cluster, the credential is what keeps other namespaces' pods from reading the namespace's data
// through the transformer (docs/transforms.md#credential).
func WithoutAuth() Option {
	return func(o *options) { o.withoutAuth = true }
}

// WithStoresFile reads the origins of the namespace's ObjectStores from path (one per line, as
// wire.StoreOrigin writes them), overriding the file wire.TransformerStoresKey next to the token
// file; an empty path lists none. An hpull src on one of these origins is fetched, whatever its
// path and query (a presigned GET). The file is read again when it changes; while it is missing,
// it lists none. WithoutAuth ignores it: a transformer that serves anyone fetches only in-flight
// URLs, or anyone could make it send requests to the stores from inside the cluster.
func WithStoresFile(path string) Option {
	return func(o *options) { o.storesFile, o.storesFileSet = path, true }
}

// storesPath is the stores file the options name, "" for none: WithStoresFile's, else the one the
// controller mounts next to the token file.
func storesPath(o options) string {
	switch {
	case o.withoutAuth:
		return ""
	case o.storesFileSet:
		return o.storesFile
	case !o.tokenSet && o.tokenFile != "":
		return filepath.Join(filepath.Dir(o.tokenFile), wire.TransformerStoresKey)
	}
	return ""
}
