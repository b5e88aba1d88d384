package transformer_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// serve runs h on a loopback listener until ctx ends; the returned channel
// yields Serve's result.
func serve(t *testing.T, ctx context.Context, h *transformer.Handler) (string, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), served
}

func TestServeShutsDownGracefully(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		close(started)
		<-release
		return in, nil
	}
	h, err := transformer.New(slow, transformer.WithoutAuth())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	url, served := serve(t, ctx, h)

	idle, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(url, "http")+wire.PathWS, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.CloseNow()
	answered := make(chan error, 1)
	var out strings.Builder
	go func() {
		answered <- transformertest.DoHTTP(t.Context(), http.DefaultClient, http.MethodPut, wire.ObjectURL(url, "o", wire.Query{}), strings.NewReader("in flight"), &out)
	}()
	<-started

	cancel()
	// The idle session is told to go away at once...
	if _, _, err := idle.Reader(t.Context()); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("idle ws session: %v, want close status %v", err, websocket.StatusGoingAway)
	}
	// ...while the object in flight is answered in full.
	close(release)
	if err := <-answered; err != nil || out.String() != "in flight" {
		t.Errorf("object in flight: %q, %v", out.String(), err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil after a graceful shutdown", err)
	}
}

func TestServeClosesWhatOutlastsTheTimeout(t *testing.T) {
	b := newBlocking()
	h, err := transformer.New(b.fn, transformer.WithShutdownTimeout(0), transformer.WithoutAuth())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	url, served := serve(t, ctx, h)
	c, err := transformertest.DialWS(t.Context(), url, "")
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() { sent <- c.Do(t.Context(), wire.Control{Object: "o"}, strings.NewReader("x"), io.Discard) }()
	<-b.started

	cancel()
	<-b.canceled
	if err := <-served; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Serve = %v, want %v", err, context.DeadlineExceeded)
	}
	if err := <-sent; err == nil {
		t.Error("an object cut by shutdown succeeded")
	}
}
