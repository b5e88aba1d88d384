package transformer_test

import (
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// countingServer serves handler on every interface and counts the connections it accepts: a
// src the transformer refuses must never be dialled.
type countingServer struct {
	net.Listener
	accepted atomic.Int64
	port     string
}

func (c *countingServer) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err == nil {
		c.accepted.Add(1)
	}
	return conn, err
}

func newCountingServer(t *testing.T, handler http.Handler) *countingServer {
	t.Helper()
	ln, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	c := &countingServer{Listener: ln, port: port}
	srv := &http.Server{Handler: handler}
	go srv.Serve(c)
	t.Cleanup(func() { srv.Close() })
	return c
}

func TestSrcOutsideTheCallersInflightURLsIsRefusedBeforeAnyDial(t *testing.T) {
	var c counting
	s := transformertest.NewServer(t, c.fn)
	target := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "fetched") }))
	id := rand.Text()
	caller := "127.0.0.1:" + target.port // the test's client is on 127.0.0.1
	for name, src := range map[string]string{
		"another host":             "http://127.0.0.2:" + target.port + wire.PathInflight + id,
		"a host name":              "http://localhost:" + target.port + wire.PathInflight + id,
		"wrong path":               "http://" + caller + "/blob/1",
		"path outside inflight":    "http://" + caller + "/v1/inflightX/" + id,
		"dot dot":                  "http://" + caller + wire.PathInflight + "../" + id[3:],
		"encoded dot dot":          "http://" + caller + wire.PathInflight + "%2e%2e/" + id[3:],
		"encoded slash":            "http://" + caller + wire.PathInflight + id[:13] + "%2F" + id[16:],
		"longer path":              "http://" + caller + wire.PathInflight + id + "/x",
		"id too short":             "http://" + caller + wire.PathInflight + id[1:],
		"id not base32":            "http://" + caller + wire.PathInflight + strings.ToLower(id),
		"userinfo":                 "http://u:p@" + caller + wire.PathInflight + id,
		"query":                    "http://" + caller + wire.PathInflight + id + "?x=1",
		"empty query":              "http://" + caller + wire.PathInflight + id + "?",
		"fragment":                 "http://" + caller + wire.PathInflight + id + "#f",
		"https":                    "https://" + caller + wire.PathInflight + id,
		"not a URL":                "http://" + caller + "%zz",
		"another host's IPv6 form": "http://[::ffff:127.0.0.2]:" + target.port + wire.PathInflight + id,
	} {
		t.Run(name, func(t *testing.T) {
			err := s.DoSrc(t.Context(), "o", "", src, io.Discard)
			re, ok := errors.AsType[*transformertest.RemoteError](err)
			if !ok || re.Status != http.StatusBadRequest {
				t.Fatalf("src %q: %v, want 400", src, err)
			}
			if !strings.Contains(re.Message, "127.0.0.1") || !strings.Contains(re.Message, src) {
				t.Errorf("message %q names neither the caller nor the src", re.Message)
			}
		})
	}
	if n := target.accepted.Load(); n != 0 {
		t.Errorf("the transformer dialled a refused src %d times", n)
	}
	if n := c.calls.Load(); n != 0 {
		t.Errorf("the Func ran %d times", n)
	}
	// The caller's own in-flight URL on any port is fetched.
	var out strings.Builder
	if err := s.DoSrc(t.Context(), "o", "", "http://"+caller+wire.PathInflight+id, &out); err != nil || out.String() != "fetched" {
		t.Errorf("the caller's in-flight URL: %q, %v", out.String(), err)
	}
}

func TestSrcRedirectIsNotFollowed(t *testing.T) {
	s := transformertest.NewServer(t, echo)
	elsewhere := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "elsewhere") }))
	id := rand.Text()
	redirect := newCountingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+elsewhere.port+wire.PathInflight+id, http.StatusFound)
	}))
	err := s.DoSrc(t.Context(), "o", "", "http://127.0.0.1:"+redirect.port+wire.PathInflight+id, io.Discard)
	if re, ok := errors.AsType[*transformertest.RemoteError](err); !ok || re.Status != http.StatusBadGateway {
		t.Errorf("a redirecting src: %v, want 502", err)
	}
	if n := elsewhere.accepted.Load(); n != 0 {
		t.Errorf("the redirect was followed (%d connections)", n)
	}
}
