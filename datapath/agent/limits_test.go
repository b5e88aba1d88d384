package agent

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// poolConns returns the connections the ws pool of the transformer at url
// holds now.
func (e *env) poolConns(url string) []*wsConn {
	p := e.agent.ws.pool(e.poolKey(url))
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*wsConn(nil), p.conns...)
}

// TestOversizedArgs: args over wire.MaxArgs are answered 400 naming the
// limit, by every mechanism, and the next object goes through; over ws on
// the same pooled connection, which other clients share (70 KiB of args,
// over wire.MaxControlSize, used to close it).
func TestOversizedArgs(t *testing.T) {
	for _, comm := range comms {
		t.Run(string(comm), func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.WSConns = 1 })
			s := e.addTransform("t", comm, "", tag("t"))
			e.writeObject("obj", []byte("x"))
			most := strings.Repeat("a", wire.MaxArgs)
			if a := e.put("t", "obj", wire.Query{Args: most}, []byte("x")); a.status != http.StatusOK || string(a.body) != "x|t:"+most {
				t.Fatalf("object with wire.MaxArgs bytes of args: %d %.100s", a.status, a.body)
			}
			before := e.poolConns(s.URL)
			for _, n := range []int{wire.MaxArgs + 1, 70 << 10} {
				big := strings.Repeat("a", n)
				for name, a := range map[string]answer{
					"PUT": e.put("t", "obj", wire.Query{Args: big}, []byte("x")),
					"GET": e.get("t", "obj", wire.Query{Args: big}),
				} {
					if a.status != http.StatusBadRequest || !strings.Contains(a.apiError(t).Error, "wire.MaxArgs") {
						t.Errorf("%s with %d bytes of args: %d %.200s; want 400 naming wire.MaxArgs", name, n, a.status, a.body)
					}
				}
			}
			if a := e.put("t", "obj", wire.Query{Args: "2"}, []byte("x")); a.status != http.StatusOK || string(a.body) != "x|t:2" {
				t.Errorf("object after the refusals: %d %q", a.status, a.body)
			}
			if after := e.poolConns(s.URL); len(after) != len(before) || (len(after) == 1 && after[0] != before[0]) {
				t.Errorf("ws connections %v before, %v after; want the same one", before, after)
			}
		})
	}
}

// TestOversizedArgsOnStream: a stream answers the one object with oversized
// args with an error and goes on (a run's are refused: TestNodeRunRefusals).
func TestOversizedArgsOnStream(t *testing.T) {
	big := strings.Repeat("a", wire.MaxArgs+1)
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommWS, "", tag("t"))
	c := dialStream(t, e, "t")
	if err := c.send("o", big, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := c.receive(io.Discard); err == nil || !strings.Contains(err.Error(), "wire.MaxArgs") {
		t.Errorf("stream object with oversized args: %v, want an error naming wire.MaxArgs", err)
	}
	if err := c.send("o", "1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := c.receive(&out); err != nil || out.String() != "x|t:1" {
		t.Errorf("next stream object: %q, %v", out.String(), err)
	}

}

// TestControlMessageOverLimit: a control message over wire.MaxControlSize
// fails its one object with 400 before anything is written, and the
// connection, which the transformer would close, carries the next object.
func TestControlMessageOverLimit(t *testing.T) {
	e := newEnv(t)
	s := e.addTransform("t", etlv1alpha1.CommWS, "", echo)
	ctx := context.Background()
	conn, err := e.agent.ws.get(ctx, e.targetAt(s.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.do(ctx, wire.Control{Object: "o", Args: strings.Repeat("a", 70<<10)}, strings.NewReader("x"))
	if statusOf(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "wire.MaxControlSize") {
		t.Errorf("oversized control message: %v (status %d), want 400 naming wire.MaxControlSize", err, statusOf(err))
	}
	res, err := conn.do(ctx, wire.Control{Object: "o"}, strings.NewReader("after"))
	if err != nil {
		t.Fatalf("next object on the connection: %v", errors.Join(err, conn.err))
	}
	defer res.Close()
	if data, err := io.ReadAll(res); err != nil || string(data) != "after" {
		t.Errorf("next object: %q, %v", data, err)
	}
}
