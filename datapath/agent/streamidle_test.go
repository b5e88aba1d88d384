package agent

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/ws"
)

// streamsOpen is how many client streams the agent holds now.
func (e *env) streamsOpen() int {
	return e.agent.limits.streams.Held()
}

// TestStreamIdleTimeout: a stream with nothing in flight and nothing sent
// is closed with 1001 and a reason once idle, pings notwithstanding, and
// its slot is freed.
func TestStreamIdleTimeout(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.StreamIdleTimeout, o.PingInterval = 20*time.Millisecond, time.Millisecond })
	e.addTransform("t", etlv1alpha1.CommWS, "", echo)
	c := dialStream(t, e, "t")
	if err := c.send("x", "", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := c.receive(&out); err != nil || out.String() != "hi" {
		t.Fatalf("answer %q %v", out.String(), err)
	}
	_, _, err := c.conn.NextReader()
	if ce, ok := errors.AsType[*ws.CloseError](err); !ok || ce.Code != ws.StatusGoingAway || !strings.Contains(ce.Reason, "idle") {
		t.Fatalf("idle stream ended with %v, want a close frame 1001 saying idle", err)
	}
	waitUntil(t, func() bool { return e.streamsOpen() == 0 })
}

// TestStreamWriteTimeout: a client that sends objects and never reads the
// answers is dropped after the write timeout instead of holding the agent.
func TestStreamWriteTimeout(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.WriteTimeout = 20 * time.Millisecond })
	e.addTransform("t", etlv1alpha1.CommWS, "", echo)
	c := dialStream(t, e, "t")
	data := bytes.Repeat([]byte("a"), 64<<10)
	for c.send("x", "", data) == nil {
	}
	waitUntil(t, func() bool { return e.streamsOpen() == 0 })
}

// stuckTransformer serves the ws contract as an echo, except on its first
// connection, which it never reads: a transformer that stopped reading.
func stuckTransformer(t *testing.T) (srv *httptest.Server, accepted *atomic.Int32) {
	accepted = new(atomic.Int32)
	stop := make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := ws.Accept(w, r)
		if err != nil {
			return
		}
		defer conn.CloseNow()
		if accepted.Add(1) == 1 {
			<-stop
			return
		}
		for {
			if _, ctrl, err := conn.NextReader(); err != nil || ctrl == nil {
				return
			}
			_, body, err := conn.NextReader()
			if err != nil {
				return
			}
			conn.LockWrite()
			_, srcErr, dstErr := conn.WriteFrom(ws.Binary, body, make([]byte, 64<<10))
			conn.UnlockWrite()
			if srcErr != nil || dstErr != nil {
				return
			}
		}
	}))
	t.Cleanup(func() {
		close(stop)
		srv.Close()
	})
	return srv, accepted
}

// TestPoolDropsConnectionThatStopsReading: a pooled connection whose
// transformer stops reading fails its object after the write timeout (not
// the object's), is dropped, and the next object dials anew.
func TestPoolDropsConnectionThatStopsReading(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.WriteTimeout, o.WSConns = 20*time.Millisecond, 1 })
	srv, accepted := stuckTransformer(t)
	e.resolver.mu.Lock()
	e.resolver.targets["default/stuck"] = Target{
		Namespace: "default", Name: "stuck", Communication: etlv1alpha1.CommWS,
		ObjectTimeout: 10 * time.Second, URL: srv.URL,
	}
	e.resolver.mu.Unlock()
	e.writeSparse("big", beyondSocketBuffers)
	if a := e.get("stuck", "big", wire.Query{}); a.status != http.StatusBadGateway {
		t.Fatalf("object to a transformer that does not read: %d %s, want 502 from the write timeout", a.status, a.body)
	}
	if a := e.put("stuck", "small", wire.Query{}, []byte("x")); a.status != http.StatusOK || string(a.body) != "x" {
		t.Fatalf("next object: %d %s", a.status, a.body)
	}
	if n := accepted.Load(); n != 2 {
		t.Errorf("%d connections dialled, want 2: the stuck one dropped, a new one", n)
	}
	for _, c := range e.poolConns(srv.URL) {
		if c.broken() {
			t.Error("the pool still holds the broken connection")
		}
	}
}
