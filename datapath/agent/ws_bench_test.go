package agent

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/loadgen"
	"github.com/mlkube/mlkube/internal/ws"
)

// runWindowed drives b.N objects on clients connections from dial, each
// keeping up to window objects in flight while a reader of its own checks
// the results, and returns the time per object.
func runWindowed(b *testing.B, payload []byte, clients, window int, dial func() loadgen.MsgClient) float64 {
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	conns := make([]loadgen.MsgClient, clients)
	for i := range conns {
		conns[i] = dial()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, c := range conns {
		wg.Go(func() {
			if _, err := loadgen.Stream(c, payload, window, func() bool { return next.Add(1) <= int64(b.N) }); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}

// wsDialer starts the server of a streaming row and returns its dialer:
// ws-stream is the agent's PathStream in front of a ws echo transformer;
// bare-ws and coder-ws are bare WebSocket echoes.
func wsDialer(b *testing.B, path string) func() loadgen.MsgClient {
	switch path {
	case "ws-stream":
		e := newEnv(b)
		e.addTransform("echo", etlv1alpha1.CommWS, "", echo)
		return func() loadgen.MsgClient {
			return loadgen.AgentStream{C: dialStream(b, e, "echo").conn, Object: "object"}
		}
	case "bare-ws":
		url := wsServer(b, loadgen.WSEcho)
		return func() loadgen.MsgClient {
			c, err := ws.Dial(context.Background(), url)
			if err != nil {
				b.Fatal(err)
			}
			return loadgen.OwnWS{C: c}
		}
	default:
		url := wsServer(b, coderEcho)
		return func() loadgen.MsgClient {
			c, _, err := websocket.Dial(context.Background(), url, nil)
			if err != nil {
				b.Fatal(err)
			}
			c.SetReadLimit(-1)
			return coderWS{c}
		}
	}
}

// wsServer serves handler and returns its ws:// URL.
func wsServer(b *testing.B, handler http.HandlerFunc) string {
	ts := httptest.NewServer(handler)
	b.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http")
}

// coderEcho is loadgen.WSEcho with coder/websocket.
func coderEcho(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(-1)
	ctx := context.Background()
	buf := make([]byte, bufpool.ObjectSize)
	for {
		typ, msg, err := c.Reader(ctx)
		if err != nil {
			return
		}
		out, err := c.Writer(ctx, typ)
		if err != nil {
			return
		}
		if _, err := io.CopyBuffer(out, msg, buf); err != nil {
			return
		}
		if err := out.Close(); err != nil {
			return
		}
	}
}

type coderWS struct{ c *websocket.Conn }

func (c coderWS) Send(payload []byte) error {
	return c.c.Write(context.Background(), websocket.MessageBinary, payload)
}
func (c coderWS) Close() { c.c.CloseNow() }

func (c coderWS) Receive(w io.Writer) error {
	_, r, err := c.c.Reader(context.Background())
	if err == nil {
		_, err = io.Copy(w, r)
	}
	return err
}
