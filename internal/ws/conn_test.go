package ws

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/coder/websocket"
)

// sizes cross every frame-length encoding and the buffer sizes.
var sizes = []int{0, 1, 125, 126, 0xFFFF, 0x10000, writeBufferSize + 1, 1 << 20}

func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// serve runs handler on every connection accepted by this package and
// returns the ws:// URL.
func serve(t *testing.T, handler func(*Conn)) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r)
		if err != nil {
			return
		}
		defer c.CloseNow()
		handler(c)
	}))
	t.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http")
}

// echo answers every message with the same message, streamed back in
// frames of the size it reads.
func echo(c *Conn) {
	buf := make([]byte, 8<<10)
	for {
		typ, r, err := c.NextReader()
		if err != nil {
			return
		}
		c.LockWrite()
		w := c.MessageWriter(typ)
		_, err = io.CopyBuffer(w, r, buf)
		if err == nil {
			err = w.Close()
		}
		c.UnlockWrite()
		if err != nil {
			return
		}
	}
}

func dial(t *testing.T, url string) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func readMessage(t *testing.T, c *Conn) (MessageType, []byte) {
	t.Helper()
	typ, r, err := c.NextReader()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return typ, data
}

// TestClientAgainstAnotherImplementation checks the client side against
// coder/websocket's server: one-frame and streamed messages of every size.
func TestClientAgainstAnotherImplementation(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(-1)
		ctx := context.Background()
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			if err := c.Write(ctx, typ, data); err != nil {
				return
			}
		}
	}))
	defer ts.Close()
	c := dial(t, "ws"+strings.TrimPrefix(ts.URL, "http"))
	for _, n := range sizes {
		want := payload(n)
		if err := c.Send(Binary, want); err != nil {
			t.Fatal(err)
		}
		if typ, got := readMessage(t, c); typ != Binary || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes in one frame: echo type %d, %d bytes differ", n, typ, len(got))
		}
		c.LockWrite()
		w := c.MessageWriter(Text)
		for chunk := range slices(want, 1000) {
			w.Write(chunk)
		}
		err := w.Close()
		c.UnlockWrite()
		if err != nil {
			t.Fatal(err)
		}
		if typ, got := readMessage(t, c); typ != Text || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes streamed: echo type %d, %d bytes differ", n, typ, len(got))
		}
	}
}

func slices(b []byte, size int) func(func([]byte) bool) {
	return func(yield func([]byte) bool) {
		for len(b) > 0 {
			n := min(size, len(b))
			if !yield(b[:n]) {
				return
			}
			b = b[n:]
		}
	}
}

// TestServerAgainstAnotherImplementation checks the server side against
// coder/websocket's client, which masks its frames and fragments the
// messages it streams; its ping needs this side's pong.
func TestServerAgainstAnotherImplementation(t *testing.T) {
	url := serve(t, echo)
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(-1)
	for _, n := range sizes {
		want := payload(n)
		w, err := c.Writer(ctx, websocket.MessageBinary)
		if err != nil {
			t.Fatal(err)
		}
		for chunk := range slices(want, 3000) {
			w.Write(chunk)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		typ, got, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if typ != websocket.MessageBinary || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: echo type %v, %d bytes differ", n, typ, len(got))
		}
	}
	// The library's Ping waits for the pong, which needs a read pending.
	go c.Read(ctx)
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func TestCloseStatusBothWays(t *testing.T) {
	got := make(chan error, 1)
	url := serve(t, func(c *Conn) {
		typ, data := mustRead(c)
		if typ == Text && string(data) == "close" {
			c.Close(StatusGoingAway, "shutting down")
			c.NextReader() // takes the peer's answer
			return
		}
		_, _, err := c.NextReader()
		got <- err
	})
	ctx := context.Background()

	// This side closes: the other implementation sees the status.
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(ctx, websocket.MessageText, []byte("close"))
	_, _, err = c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("peer read after Close = %v, want status 1001", err)
	}

	// The peer closes: NextReader returns its status and reason.
	c, _, err = websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Write(ctx, websocket.MessageText, []byte("wait"))
	c.Close(websocket.StatusPolicyViolation, "bad object")
	err = <-got
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Code != StatusPolicyViolation || ce.Reason != "bad object" {
		t.Errorf("NextReader after the peer closed = %v, want status 1008 \"bad object\"", err)
	}
	if CloseStatus(err) != StatusPolicyViolation || CloseStatus(io.EOF) != -1 {
		t.Errorf("CloseStatus does not tell close errors from others")
	}
}

func mustRead(c *Conn) (MessageType, []byte) {
	typ, r, err := c.NextReader()
	if err != nil {
		return 0, nil
	}
	data, _ := io.ReadAll(r)
	return typ, data
}

// rawClient performs the handshake by hand and returns the connection, for
// sending frames that break the protocol.
func rawClient(t *testing.T, url string, early []byte) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(url, "ws://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	req := "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := nc.Write(append([]byte(req), early...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // a 101 has no body (http.NoBody): the frames that follow stay in br
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatalf("handshake answer %d %v", resp.StatusCode, resp.Header)
	}
	return nc, br
}

func TestProtocolErrorClosesWith1002(t *testing.T) {
	got := make(chan error, 1)
	url := serve(t, func(c *Conn) {
		_, _, err := c.NextReader()
		got <- err
	})
	nc, br := rawClient(t, url, nil)
	nc.Write([]byte{0x82, 0x01, 'x'}) // an unmasked client frame
	if _, ok := errors.AsType[*ProtocolError](<-got); !ok {
		t.Errorf("NextReader on an unmasked client frame did not return a *ProtocolError")
	}
	h, err := readHeader(br, false)
	if err != nil || h.op != opClose {
		t.Fatalf("server answered %+v, %v; want a close frame", h, err)
	}
	p := make([]byte, h.length)
	io.ReadFull(br, p)
	if code := StatusCode(int(p[0])<<8 | int(p[1])); code != StatusProtocolError {
		t.Errorf("close status %d, want 1002", code)
	}
}

func TestFramesRightBehindTheRequest(t *testing.T) {
	got := make(chan string, 1)
	url := serve(t, func(c *Conn) {
		_, data := mustRead(c)
		got <- string(data)
	})
	key := [4]byte{9, 8, 7, 6}
	frame := appendHeader(nil, header{fin: true, op: opText, masked: true, key: key, length: 5})
	body := []byte("early")
	maskCopy(body, body, key, 0)
	rawClient(t, url, append(frame, body...))
	if s := <-got; s != "early" {
		t.Errorf("server read %q, want \"early\"", s)
	}
}

func TestUnreadMessageIsSkipped(t *testing.T) {
	got := make(chan string, 1)
	url := serve(t, func(c *Conn) {
		c.NextReader() // not read
		_, data := mustRead(c)
		got <- string(data)
	})
	c := dial(t, url)
	c.Send(Binary, payload(200<<10))
	c.Send(Text, []byte("second"))
	if s := <-got; s != "second" {
		t.Errorf("second message read as %q", s)
	}
}

func TestHandshakeRefusals(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.Error(w, `{"error":"unknown transform"}`, http.StatusNotFound)
			return
		}
		Accept(w, r)
	}))
	defer ts.Close()
	_, err := Dial(context.Background(), "ws"+strings.TrimPrefix(ts.URL, "http")+"/missing")
	var he *HandshakeError
	if !errors.As(err, &he) || he.Status != http.StatusNotFound || he.Body != `{"error":"unknown transform"}` {
		t.Errorf("Dial to a refusing server = %v, want its status and body", err)
	}
	if _, err := Dial(context.Background(), "http://example.invalid/"); err == nil || !strings.Contains(err.Error(), "not ws") {
		t.Errorf("Dial of an http URL = %v", err)
	}

	for name, tc := range map[string]struct {
		header map[string]string
		want   int
	}{
		"plain GET":     {map[string]string{}, http.StatusUpgradeRequired},
		"old version":   {map[string]string{"Connection": "keep-alive, Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "8"}, http.StatusUpgradeRequired},
		"key not bytes": {map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "short"}, http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || !strings.HasPrefix(string(body), "ws: ") {
				t.Errorf("answer %d %q, want %d with a reason", resp.StatusCode, body, tc.want)
			}
		})
	}
}

func TestDialEndsWithItsContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c // and never answers
	}()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := Dial(ctx, "ws://"+ln.Addr().String()+"/")
		errc <- err
	}()
	defer (<-accepted).Close()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Dial after its context ended = %v, want context.Canceled", err)
	}
}

// gatedConn counts the writes to it and holds the first until released.
type gatedConn struct {
	net.Conn
	mu      sync.Mutex
	writes  [][]byte
	entered chan struct{}
	release chan struct{}
}

func (g *gatedConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	g.writes = append(g.writes, bytes.Clone(p))
	first := len(g.writes) == 1
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.release
	}
	return len(p), nil
}

// TestMessagesWrittenDuringASendLeaveTogether is the batching: while the
// first message is being sent, the next ones are buffered and then leave in
// one write.
func TestMessagesWrittenDuringASendLeaveTogether(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	g := &gatedConn{Conn: client, entered: make(chan struct{}), release: make(chan struct{})}
	c := newConn(g, nil, false)
	defer c.CloseNow()
	c.Send(Binary, []byte("first"))
	<-g.entered
	for i := range 9 {
		if err := c.Send(Binary, fmt.Appendf(nil, "message %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	close(g.release)
	// The flusher was woken while it sent: it sends the nine next.
	c.mu.Lock()
	for len(c.wbuf) > 0 || c.spare == nil {
		c.mu.Unlock()
		// Empty on purpose: taking sendMu waits for a send under way.
		c.sendMu.Lock()
		c.sendMu.Unlock() //nolint:staticcheck // SA2001: the empty critical section is the barrier

		c.mu.Lock()
	}
	c.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.writes) != 2 {
		t.Fatalf("%d writes, want 2: the first message, then the nine others together", len(g.writes))
	}
	br := bufio.NewReader(bytes.NewReader(g.writes[1]))
	for i := range 9 {
		h, err := readHeader(br, false)
		if err != nil {
			t.Fatalf("frame %d of the second write: %v", i, err)
		}
		br.Discard(int(h.length))
	}
	if br.Buffered() != 0 {
		t.Errorf("the second write holds more than the nine frames")
	}
}

// stuckConn signals when a write starts, then blocks in it until closed.
type stuckConn struct {
	net.Conn
	writing chan struct{}
	once    sync.Once
}

func (s *stuckConn) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.writing) })
	return s.Conn.Write(p)
}

// TestCloseNowFreesAStuckWriter: a peer that stops reading leaves a writer
// blocked in the socket with the buffer locked; CloseNow must not wait for
// that lock, and the writer must get an error.
func TestCloseNowFreesAStuckWriter(t *testing.T) {
	ours, peer := net.Pipe() // every write waits for a read that never comes
	defer peer.Close()
	s := &stuckConn{Conn: ours, writing: make(chan struct{})}
	c := newConn(s, nil, false)
	sent := make(chan error, 1)
	go func() { sent <- c.Send(Binary, payload(writeBufferSize*2)) }()
	<-s.writing
	c.CloseNow()
	if err := <-sent; err == nil {
		t.Error("a write cut by CloseNow succeeded")
	}
	if err := c.Send(Text, []byte("after")); err == nil {
		t.Error("Send after CloseNow succeeded")
	}
}

// TestWriteFromTricklingSource: a source that yields a byte per read still
// goes out in frames of at least minFrame, the last one ending the message
// with data rather than an empty frame.
func TestWriteFromTricklingSource(t *testing.T) {
	ours, peer := net.Pipe()
	defer peer.Close()
	c := newConn(ours, nil, false)
	defer c.CloseNow()
	want := payload(100 << 10)
	sent := make(chan error, 1)
	go func() {
		c.LockWrite()
		defer c.UnlockWrite()
		_, srcErr, dstErr := c.WriteFrom(Binary, iotest.OneByteReader(bytes.NewReader(want)), make([]byte, 64<<10))
		sent <- errors.Join(srcErr, dstErr)
	}()
	br := bufio.NewReader(peer)
	var got []byte
	for {
		h, err := readHeader(br, false)
		if err != nil {
			t.Fatal(err)
		}
		if !h.fin && h.length < minFrame {
			t.Errorf("frame of %d bytes before the last, want at least %d", h.length, minFrame)
		}
		p := make([]byte, h.length)
		io.ReadFull(br, p)
		got = append(got, p...)
		if h.fin {
			if h.length == 0 {
				t.Error("the message ends with an empty frame")
			}
			break
		}
	}
	if err := <-sent; err != nil || !bytes.Equal(got, want) {
		t.Errorf("WriteFrom = %v; %d bytes arrived, want %d equal ones", err, len(got), len(want))
	}
}

// TestDialHeaderReachesTheServer: a client stream presents its bearer token in the handshake, and
// a value cannot smuggle a header of its own.
func TestDialHeaderReachesTheServer(t *testing.T) {
	got := make(chan http.Header, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		Accept(w, r)
	}))
	defer ts.Close()
	h := http.Header{"Authorization": {"Bearer token-1"}, "X-Evil": {"a\r\nX-Injected: 1"}}
	c, err := DialHeader(context.Background(), "ws"+strings.TrimPrefix(ts.URL, "http"), h)
	if err != nil {
		t.Fatal(err)
	}
	c.CloseNow()
	seen := <-got
	if a := seen.Get("Authorization"); a != "Bearer token-1" {
		t.Errorf("server saw Authorization %q, want the dialer's", a)
	}
	if seen.Get("X-Injected") != "" {
		t.Errorf("a header value with CRLF added a header: %v", seen)
	}
	if seen.Get("Sec-WebSocket-Key") == "" {
		t.Errorf("the handshake lost its own headers: %v", seen)
	}
}
