package agent

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// beyondSocketBuffers is an object larger than what loopback socket buffers
// take in: a peer that does not read it leaves its writer blocked.
const beyondSocketBuffers = 32 << 20

// writeSparse writes object as size zero bytes, in a sparse file: large
// objects cost the tests no disk.
func (e *env) writeSparse(object string, size int64) {
	e.t.Helper()
	e.writeObject(object, nil)
	if err := os.Truncate(filepath.Join(e.root, object), size); err != nil {
		e.t.Fatal(err)
	}
}

// addStallingPull serves the hpull Transform default/name as a hostile
// transformer: it opens each object's in-flight GET and hands the
// connection, unread, to fetched; then it answers answer at once or, when
// answer is "", holds its answer until the agent gives the request up.
func (e *env) addStallingPull(name, answer string) <-chan net.Conn {
	fetched := make(chan net.Conn, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := openFetch(wire.ParseQuery(r.URL.Query()).Src)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		fetched <- conn
		if answer != "" {
			io.WriteString(w, answer)
			return
		}
		<-r.Context().Done()
	}))
	e.t.Cleanup(func() {
		srv.Close()
		for {
			select {
			case c := <-fetched:
				c.Close()
			default:
				return
			}
		}
	})
	e.addTarget(name, etlv1alpha1.CommHPull, srv.URL)
	return fetched
}

// openFetch sends the GET of src on a connection of its own and waits for
// the agent to start sending the object; the caller reads the rest as it
// likes (or not at all).
func openFetch(src string) (net.Conn, error) {
	u, err := url.Parse(src)
	if err != nil {
		return nil, err
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", u.RequestURI(), u.Host); err != nil {
		conn.Close()
		return nil, err
	}
	const ok = "HTTP/1.1 200"
	status := make([]byte, len(ok))
	if _, err := io.ReadFull(conn, status); err != nil || string(status) != ok {
		conn.Close()
		return nil, fmt.Errorf("fetch answered %q: %w", status, err)
	}
	return conn, nil
}

// trickle reads conn a byte at a time, a millisecond apart, until stop is
// closed or the read fails; done is closed then.
func trickle(conn net.Conn, stop <-chan struct{}) (done <-chan struct{}) {
	d := make(chan struct{})
	go func() {
		defer close(d)
		one := make([]byte, 1)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if _, err := conn.Read(one); err != nil {
				return
			}
		}
	}()
	return d
}

func (e *env) inflightStreams() int {
	e.agent.inflight.mu.Lock()
	defer e.agent.inflight.mu.Unlock()
	return len(e.agent.inflight.streams)
}

// TestHPullTransformerStopsReading: a transformer that fetches its object
// and stops reading it (or reads a byte now and then) is cut after the
// write timeout, long before the object's; an object still waiting for its
// answer fails naming the Transform and what happened, and the in-flight
// GET lets go of the connection. One that answered anyway is answered. The
// object comes from ?src=, a stream that closing cannot stop as it stops a
// file, or is stored on the node.
func TestHPullTransformerStopsReading(t *testing.T) {
	for name, tc := range map[string]struct {
		answer  string
		trickle bool
		stored  bool
	}{
		"holds its answer":         {},
		"trickles":                 {trickle: true},
		"answers at once":          {answer: "ok"},
		"stored, holds its answer": {stored: true},
		"stored, trickles":         {trickle: true, stored: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, allowLoopbackSrc(t), func(o *Options) { o.WriteTimeout = 50 * time.Millisecond })
			fetched := e.addStallingPull("stall", tc.answer)
			e.writeSparse("big", beyondSocketBuffers)
			files := httptest.NewServer(http.FileServer(http.Dir(e.root)))
			t.Cleanup(files.Close)
			stop, conns := make(chan struct{}), make(chan net.Conn, 1)
			go func() {
				conn := <-fetched
				if tc.trickle {
					<-trickle(conn, stop)
				}
				conns <- conn
			}()
			q := wire.Query{Src: files.URL + "/big"}
			if tc.stored {
				q = wire.Query{}
			}
			a := e.get("stall", "big", q)
			switch msg := ""; {
			case tc.answer != "":
				if a.status != http.StatusOK || string(a.body) != tc.answer {
					t.Errorf("answer %d %q, want 200 %q", a.status, a.body, tc.answer)
				}
			case a.status != http.StatusBadGateway:
				t.Errorf("answer %d %s, want 502", a.status, a.body)
			default:
				msg = a.apiError(t).Error
				if !strings.Contains(msg, "transform default/stall") || !strings.Contains(msg, "did not read its object within 50ms") {
					t.Errorf("error %q, want one naming the Transform and the write timeout", msg)
				}
			}
			close(stop)
			conn := <-conns
			// The agent closed the fetch: what it sent ends, short of the
			// object.
			n, _ := io.Copy(io.Discard, conn)
			conn.Close()
			if n >= beyondSocketBuffers {
				t.Errorf("the transformer got all %d bytes: its fetch was not cut", n)
			}
			if n := e.inflightStreams(); n != 0 {
				t.Errorf("%d objects still in flight", n)
			}
		})
	}
}

// blockedBody is an object's bytes that closing does not stop, as a
// client's request body or an earlier stage's result: Read waits for
// unblock, then has a few bytes.
type blockedBody struct{ unblock <-chan struct{} }

func (b blockedBody) Read(p []byte) (int, error) {
	<-b.unblock
	return copy(p, "late"), nil
}

// TestInflightReleaseIsBounded: releasing an object whose GET is stuck in a
// read of its bytes returns without waiting for that read, and the GET,
// once the read returns, is cut rather than answered.
func TestInflightReleaseIsBounded(t *testing.T) {
	f := &inflight{writeTimeout: 10 * time.Millisecond}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	unblock := make(chan struct{})
	unblockOnce := sync.OnceFunc(func() { close(unblock) })
	t.Cleanup(unblockOnce) // before srv.Close, which waits for the GET
	id, _, remove := f.add(context.Background(), blockedBody{unblock}, -1, Target{URL: srv.URL})
	fetched := make(chan error, 1)
	go func() {
		resp, err := http.Get(srv.URL + wire.PathInflight + id)
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		fetched <- err
	}()
	waitUntil(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return len(f.streams) == 0 })
	remove()
	unblockOnce()
	if err := <-fetched; err == nil {
		t.Error("the GET of a released object was answered in full")
	}
}
