package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mlkube/mlkube/api/wire"
)

// hostileServer serves mode; free lets its stalled requests go, at the latest when the test ends.
func hostileServer(t *testing.T, mode string) (srv *httptest.Server, free func()) {
	t.Helper()
	h, err := newHostile(mode)
	if err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewServer(h)
	var once sync.Once
	free = func() { once.Do(func() { close(h.release) }) }
	// Cleanups run last first: stalled handlers go before the server waits for them.
	t.Cleanup(srv.Close)
	t.Cleanup(free)
	return srv, free
}

func TestHostileModes(t *testing.T) {
	if _, err := newHostile("nice"); err == nil || !strings.Contains(err.Error(), `HOSTILE="nice"`) {
		t.Fatalf("an unknown mode: %v", err)
	}
	for _, mode := range []string{modeHeaders, modeStall} {
		srv, _ := hostileServer(t, mode)
		if code, body := do(t, "GET", srv.URL+wire.PathHealth, ""); code != http.StatusOK {
			t.Errorf("mode %s: GET %s = %d %q, want 200: the Transform must become ready", mode, wire.PathHealth, code, body)
		}
	}
}

// TestHostileHeadersHaveNoEnd: an hpush PUT, an hpull GET and a ws handshake are each answered
// with a status line and then more header bytes than a bounded reader takes; net/http's client,
// bounded, refuses the answer.
func TestHostileHeadersHaveNoEnd(t *testing.T) {
	srv, _ := hostileServer(t, modeHeaders)
	const past = 4 << 20 // read this much of the headers, past any bound a client would set
	for _, c := range []struct{ name, request, status string }{
		{"hpush", "PUT /obj HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", "HTTP/1.1 200 OK"},
		{"hpull", "GET /obj?src=x HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200 OK"},
		{"ws", "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", "HTTP/1.1 101 Switching Protocols"},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, c.request); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			first, err := br.ReadString('\n')
			if err != nil || strings.TrimSpace(first) != c.status {
				t.Fatalf("status line %q (%v), want %q", first, err, c.status)
			}
			read := 0
			for read < past {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("after %d bytes of headers: %v", read, err)
				}
				if line == "\r\n" {
					t.Fatalf("the headers ended after %d bytes; want more than %d", read, past)
				}
				read += len(line)
			}
		})
	}
	// A bounded client refuses the answer rather than holding it.
	client := &http.Client{Transport: &http.Transport{MaxResponseHeaderBytes: 64 << 10}}
	resp, err := client.Get(srv.URL + "/obj")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a client bounding headers to 64 KiB got %s", resp.Status)
	}
	if !strings.Contains(err.Error(), "headers exceeded") {
		t.Errorf("a client bounding headers to 64 KiB: %v, want headers exceeded", err)
	}
}

// TestHostileStallHoldsItsObject: the stall transformer opens its object's ?src=, takes a first
// byte, then never reads on nor answers: the object's server stays blocked in its writes after the
// transformer's caller has given up, until the transformer lets go.
func TestHostileStallHoldsItsObject(t *testing.T) {
	srv, free := hostileServer(t, modeStall)
	started, finished := make(chan struct{}), make(chan error, 1)
	object := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		buf := make([]byte, 1<<20)
		var err error
		for i := 0; i < 256 && err == nil; i++ { // 256 MiB: far past what socket buffers take in
			_, err = w.Write(buf)
			if i == 0 {
				http.NewResponseController(w).Flush()
				close(started)
			}
		}
		finished <- err
	}))
	defer object.Close()

	ctx, cancel := context.WithCancel(context.Background())
	answered := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/obj?"+wire.QuerySrc+"="+url.QueryEscape(object.URL), nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = errors.New("answered " + resp.Status)
		}
		answered <- err
	}()
	<-started
	cancel() // the agent gives the object up
	if err := <-answered; !errors.Is(err, context.Canceled) {
		t.Fatalf("the stalled request: %v, want it unanswered until its caller gave up", err)
	}
	select {
	case err := <-finished:
		t.Fatalf("the object's server finished (%v) while the transformer stalls", err)
	default:
	}
	free()
	if err := <-finished; err == nil {
		t.Errorf("the object's server wrote all 256 MiB to a transformer that read one byte")
	}
}
