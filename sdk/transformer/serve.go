package transformer

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// Main serves fn on the port of the wire contract (v1alpha1.DefaultPort, or
// the environment variable wire.EnvPort) until SIGTERM or SIGINT, then shuts down
// gracefully. It exits the process with status 1 on failure; it is all a
// transformer's main function needs to call.
func Main(fn Func, opts ...Option) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := Serve(ctx, listenAddr(os.Getenv(wire.EnvPort)), fn, opts...); err != nil {
		slog.Error("transformer failed", "error", err)
		stop()
		os.Exit(1)
	}
}

// listenAddr is the address to listen on given the value of wire.EnvPort.
func listenAddr(port string) string {
	if port == "" {
		port = strconv.Itoa(int(v1alpha1.DefaultPort))
	}
	return ":" + port
}

// Serve serves fn on addr until ctx ends, then shuts down gracefully.
func Serve(ctx context.Context, addr string, fn Func, opts ...Option) error {
	h, err := New(fn, opts...)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return h.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends. Then it stops accepting connections,
// lets the objects in flight finish (WebSocket sessions end after the object
// they are answering) for up to the shutdown timeout, closes what remains and
// returns. It returns nil after a shutdown in time.
func (h *Handler) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler: h,
		// Bounds slow clients on headers only: objects may take long.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.shutdownTimeout)
	defer cancel()
	// WebSocket sessions drain alongside the HTTP requests, not after them.
	wsDrained := make(chan error, 1)
	go func() { wsDrained <- h.Shutdown(sctx) }()
	err := srv.Shutdown(sctx)
	if err != nil {
		srv.Close()
	}
	err = errors.Join(err, <-wsDrained)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// Shutdown ends the WebSocket sessions, which http.Server.Shutdown does not
// track: each ends after the object it is answering, and new ones are
// refused. When ctx ends first, the sessions are closed at once and ctx's
// error returned. HTTP requests are left to http.Server.Shutdown.
func (h *Handler) Shutdown(ctx context.Context) error {
	return h.sessions.shutdown(ctx)
}
