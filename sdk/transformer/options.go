package transformer

import (
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/mlkube/mlkube/api/wire"
)

// Option configures a Handler.
type Option func(*options)

type options struct {
	fqnRoot         string
	client          *http.Client
	log             *slog.Logger
	shutdownTimeout time.Duration
}

func defaultOptions() options {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// hpull fetches every object from the same node agent: keep more than the
	// default two idle connections to it so that concurrent objects reuse them.
	t.MaxIdleConnsPerHost = 64
	return options{
		fqnRoot: os.Getenv(wire.EnvFQNRoot),
		client:  &http.Client{Transport: t},
		log:     slog.Default(),
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
