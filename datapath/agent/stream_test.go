package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/loadgen"
	"github.com/mlkube/mlkube/internal/ws"
)

// streamClient is a client of PathStream that keeps up to window objects in
// flight: send never waits for an answer, receive takes them in order.
type streamClient struct {
	conn *ws.Conn
}

func dialStream(t testing.TB, e *env, name string) *streamClient {
	conn, err := ws.Dial(context.Background(), "ws"+strings.TrimPrefix(e.url, "http")+PathStream+"default/"+name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return &streamClient{conn: conn}
}

func (c *streamClient) send(object, args string, data []byte) error {
	return loadgen.AgentStream{C: c.conn, Object: object, Args: args}.Send(data)
}

// receive returns the next result, or the transformer's error message as an
// error.
func (c *streamClient) receive(out io.Writer) error {
	return loadgen.AgentStream{C: c.conn}.Receive(out)
}

// TestStream pipelines objects on one client stream, with failures among
// them, and checks every answer arrives in order.
func TestStream(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.WSConns = 2 })
	e.addTransform("t", etlv1alpha1.CommWS, "", tag("t"))
	e.addTransform("bad", etlv1alpha1.CommWS, "", fail("nope"))
	e.addTransform("push", etlv1alpha1.CommHPush, "", echo)
	c := dialStream(t, e, "t")
	const n = 50
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			object := fmt.Sprint(i)
			if i%7 == 0 {
				object = "../escape"
			}
			if err := c.send(object, "a", bytes.Repeat([]byte{'x'}, i*1000)); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for i := range n {
		var out bytes.Buffer
		err := c.receive(&out)
		if i%7 == 0 {
			if err == nil || !strings.Contains(err.Error(), "..") {
				t.Errorf("object %d: error %v, want the bad path", i, err)
			}
			continue
		}
		if want := strings.Repeat("x", i*1000) + "|t:a"; err != nil || out.String() != want {
			t.Errorf("object %d: %d bytes, error %v; want %d bytes", i, out.Len(), err, len(want))
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}

	bad := dialStream(t, e, "bad")
	if err := bad.send("o", "", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := bad.receive(io.Discard); err == nil || err.Error() != "nope" {
		t.Errorf("error %v, want the transformer's message", err)
	}

	_, err := ws.Dial(context.Background(), "ws"+strings.TrimPrefix(e.url, "http")+PathStream+"default/push")
	if he, ok := errors.AsType[*ws.HandshakeError](err); !ok || he.Status != 400 || !strings.Contains(he.Body, "ws transform") {
		t.Errorf("stream of an hpush transform: %v, want 400 saying it needs a ws transform", err)
	}
}
