package manager

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// drainingServer keeps answering admission requests for a while after the manager is told to
// stop, telling each client to close its connection, before the webhook server shuts down.
//
// Why: the API server keeps HTTP/1.1 connections to a webhook pod open and reuses them (HTTP/2
// is off, so there is no GOAWAY). By the time the pod gets SIGTERM its preStop pause has taken it
// out of the Service's endpoints, so no new connection reaches it, but the pooled ones still do.
// Shutting down at once closes them under the API server's feet: a create written onto a
// connection the pod just closed fails with "broken pipe", and the API server does not retry an
// admission call. Answering "Connection: close" for a while first lets the API server retire
// every connection it still uses cleanly, so losing one of two replicas refuses no create.
type drainingServer struct {
	webhook.Server
	// period is how long requests are drained before the server stops.
	period   time.Duration
	draining atomic.Bool
	// after is time.After, or a test's clock.
	after func(time.Duration) <-chan time.Time
}

func newDrainingServer(s webhook.Server, period time.Duration) *drainingServer {
	return &drainingServer{Server: s, period: period, after: time.After}
}

// Register registers hook behind the drain: while draining, each answer closes its connection.
func (s *drainingServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		hook.ServeHTTP(w, r)
	}))
}

// Start serves until ctx ends, then drains for the period, then stops the server.
func (s *drainingServer) Start(ctx context.Context) error {
	serving, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
		case <-serving.Done(): // the server failed
			return
		}
		s.draining.Store(true)
		select {
		case <-s.after(s.period):
		case <-serving.Done():
		}
		stop()
	}()
	return s.Server.Start(serving)
}
