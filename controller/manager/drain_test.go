package manager

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// fakeServer records what the drainingServer hands the webhook server.
type fakeServer struct {
	webhook.Server
	hooks   map[string]http.Handler
	started chan context.Context
}

func (f *fakeServer) Register(path string, hook http.Handler) { f.hooks[path] = hook }

func (f *fakeServer) Start(ctx context.Context) error {
	f.started <- ctx
	<-ctx.Done()
	return nil
}

// TestDrainingServer: once the manager's context ends, the webhook server goes on serving, each
// answer closing its connection, until the drain period is over; before, connections are kept.
func TestDrainingServer(t *testing.T) {
	inner := &fakeServer{hooks: map[string]http.Handler{}, started: make(chan context.Context, 1)}
	clock := make(chan time.Time)
	s := newDrainingServer(inner, time.Minute)
	var asked time.Duration
	s.after = func(d time.Duration) <-chan time.Time { asked = d; return clock }
	s.Register("/hook", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	// answer is the hook's status and Connection header.
	answer := func() (int, string) {
		w := httptest.NewRecorder()
		inner.hooks["/hook"].ServeHTTP(w, httptest.NewRequest("POST", "/hook", nil))
		return w.Code, w.Header().Get("Connection")
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	serving := <-inner.started
	if code, conn := answer(); code != 204 || conn != "" {
		t.Fatalf("before the stop: %d, Connection %q; want the hook's answer on a kept connection", code, conn)
	}
	cancel()
	for !s.draining.Load() {
		time.Sleep(time.Millisecond) // waits for the drain to start; asserts nothing about time
	}
	if code, conn := answer(); code != 204 || conn != "close" {
		t.Errorf("while draining: %d, Connection %q; want the hook's answer with Connection: close", code, conn)
	}
	if serving.Err() != nil {
		t.Fatal("the webhook server was stopped before the drain period ended")
	}
	clock <- time.Now()
	if err := <-done; err != nil || serving.Err() == nil {
		t.Fatalf("after the drain period: Start returned %v, server context %v; want the server stopped", err, serving.Err())
	}
	if asked != time.Minute {
		t.Errorf("drained for %s, want the period", asked)
	}
}
