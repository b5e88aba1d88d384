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
	"github.com/mlkube/mlkube/internal/ws"
)

// msgClient is a streaming client's connection: it sends objects as
// messages without waiting and receives their results in order.
type msgClient interface {
	send(payload []byte) error
	// receive writes the next result to w.
	receive(w io.Writer) error
	close()
}

// runWindowed drives b.N objects on clients connections from dial, each
// keeping up to window objects in flight while a reader of its own checks
// the results, and returns the time per object.
func runWindowed(b *testing.B, payload []byte, clients, window int, dial func() msgClient) float64 {
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	conns := make([]msgClient, clients)
	for i := range conns {
		conns[i] = dial()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, c := range conns {
		wg.Go(func() {
			if err := stream(c, payload, window, func() bool { return next.Add(1) <= int64(b.N) }); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}

// stream sends payload on c while more says so, with up to window results
// outstanding, and returns once every result is in and checked.
func stream(c msgClient, payload []byte, window int, more func() bool) error {
	slots := make(chan struct{}, window)
	failed := make(chan error, 1)
	var done atomic.Bool
	go func() {
		chk := newChecker(payload)
		for {
			chk.reset()
			err := c.receive(chk)
			if err == nil {
				err = chk.complete()
			}
			if err != nil {
				if done.Load() {
					err = nil
				}
				failed <- err
				return
			}
			<-slots
		}
	}()
	acquire := func() error {
		select {
		case slots <- struct{}{}:
			return nil
		case err := <-failed:
			return err
		}
	}
	err := func() error {
		for more() {
			if err := acquire(); err != nil {
				return err
			}
			if err := c.send(payload); err != nil {
				return err
			}
		}
		// Every result is in once the whole window is free again.
		for range window {
			if err := acquire(); err != nil {
				return err
			}
		}
		return nil
	}()
	done.Store(err == nil)
	c.close()
	if err != nil {
		return err
	}
	return <-failed
}

// wsDialer starts the server of a streaming row and returns its dialer:
// ws-stream is the agent's PathStream in front of a ws echo transformer;
// bare-ws and coder-ws are bare WebSocket echoes.
func wsDialer(b *testing.B, path string) func() msgClient {
	switch path {
	case "ws-stream":
		e := newEnv(b)
		e.addTransform("echo", etlv1alpha1.CommWS, "", echo)
		return func() msgClient { return agentStream{dialStream(b, e, "echo")} }
	case "bare-ws":
		url := wsServer(b, ownEcho)
		return func() msgClient {
			c, err := ws.Dial(context.Background(), url)
			if err != nil {
				b.Fatal(err)
			}
			return ownWS{c}
		}
	default:
		url := wsServer(b, coderEcho)
		return func() msgClient {
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

// ownEcho answers every message with its bytes, streamed as the SDK streams
// a result.
func ownEcho(w http.ResponseWriter, r *http.Request) {
	c, err := ws.Accept(w, r)
	if err != nil {
		return
	}
	defer c.CloseNow()
	buf := make([]byte, bufferSize)
	for {
		typ, msg, err := c.NextReader()
		if err != nil {
			return
		}
		c.LockWrite()
		_, srcErr, dstErr := c.WriteFrom(typ, msg, buf)
		c.UnlockWrite()
		if srcErr != nil || dstErr != nil {
			return
		}
	}
}

// coderEcho is ownEcho with coder/websocket.
func coderEcho(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(-1)
	ctx := context.Background()
	buf := make([]byte, bufferSize)
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

// agentStream is a PathStream client: each object a control message and
// its bytes.
type agentStream struct{ *streamClient }

func (c agentStream) send(payload []byte) error { return c.streamClient.send("object", "", payload) }
func (c agentStream) close()                    { c.conn.CloseNow() }

type ownWS struct{ c *ws.Conn }

func (c ownWS) send(payload []byte) error { return c.c.Send(ws.Binary, payload) }
func (c ownWS) close()                    { c.c.CloseNow() }

func (c ownWS) receive(w io.Writer) error {
	_, r, err := c.c.NextReader()
	if err == nil {
		_, err = io.Copy(w, r)
	}
	return err
}

type coderWS struct{ c *websocket.Conn }

func (c coderWS) send(payload []byte) error {
	return c.c.Write(context.Background(), websocket.MessageBinary, payload)
}
func (c coderWS) close() { c.c.CloseNow() }

func (c coderWS) receive(w io.Writer) error {
	_, r, err := c.c.Reader(context.Background())
	if err == nil {
		_, err = io.Copy(w, r)
	}
	return err
}
