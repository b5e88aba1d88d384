package h1client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// echo answers a request with its body and counts the connections it
// accepted.
type echo struct {
	conns, closed atomic.Int64
	srv           *httptest.Server
}

func newEcho(t testing.TB, h http.HandlerFunc) *echo {
	e := &echo{}
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) {
			data, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("X-Method", r.Method)
			w.Write(data)
		}
	}
	e.srv = httptest.NewUnstartedServer(h)
	e.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			e.conns.Add(1)
		case http.StateClosed:
			e.closed.Add(1)
		}
	}
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

// fallback counts the requests it carries.
type fallback struct {
	n atomic.Int64
	t http.RoundTripper
}

func (f *fallback) RoundTrip(req *http.Request) (*http.Response, error) {
	f.n.Add(1)
	return f.t.RoundTrip(req)
}

func newTransport() (*Transport, *fallback) {
	fb := &fallback{t: &http.Transport{}}
	d := &net.Dialer{}
	return &Transport{Fallback: fb, Dial: d.DialContext, MaxBody: 32 << 10, MaxHeaderBytes: 16 << 10}, fb
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func do(t testing.TB, c *http.Client, method, url string, body []byte) answer {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	return answer{resp.StatusCode, resp.Header, data}
}

// doErr sends req and closes its answer: a request that only fails or not.
func doErr(c *http.Client, req *http.Request) error {
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// open GETs url and returns the answer's body, unread.
func open(t testing.TB, c *http.Client, url string) io.ReadCloser {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Body
}

// TestSmallRequestsShareOneConnection: requests with small or no bodies go
// on this transport, one after the other on one connection, and each gets
// its own answer whole.
func TestSmallRequestsShareOneConnection(t *testing.T) {
	e := newEcho(t, nil)
	tr, fb := newTransport()
	c := &http.Client{Transport: tr}
	for i := range 20 {
		body := bytes.Repeat([]byte{byte('a' + i)}, 1+i*1500)
		a := do(t, c, http.MethodPut, e.srv.URL+"/o", body)
		if a.status != http.StatusOK || !bytes.Equal(a.body, body) || a.header.Get("X-Method") != "PUT" {
			t.Fatalf("PUT %d: %d %d bytes %q, want 200 and the body back", i, a.status, len(a.body), a.header.Get("X-Method"))
		}
		if a := do(t, c, http.MethodGet, e.srv.URL+"/o", nil); a.status != http.StatusOK || len(a.body) != 0 {
			t.Fatalf("GET %d: %d %q", i, a.status, a.body)
		}
	}
	if n := e.conns.Load(); n != 1 {
		t.Errorf("40 requests opened %d connections, want 1", n)
	}
	if n := fb.n.Load(); n != 0 {
		t.Errorf("%d requests went to the fallback, want 0", n)
	}
}

// TestOtherRequestsGoToTheFallback: a body over MaxBody or of unknown
// length is not held; the fallback carries it.
func TestOtherRequestsGoToTheFallback(t *testing.T) {
	e := newEcho(t, nil)
	tr, fb := newTransport()
	c := &http.Client{Transport: tr}
	large := bytes.Repeat([]byte("x"), int(tr.MaxBody)+1)
	if got := do(t, c, http.MethodPut, e.srv.URL+"/o", large).body; !bytes.Equal(got, large) {
		t.Errorf("large PUT: %d bytes back, want %d", len(got), len(large))
	}
	req, _ := http.NewRequest(http.MethodPut, e.srv.URL+"/o", io.MultiReader(strings.NewReader("unknown length")))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "unknown length" {
		t.Errorf("PUT of unknown length: %q back", got)
	}
	if n := fb.n.Load(); n != 2 {
		t.Errorf("the fallback carried %d requests, want 2", n)
	}
}

// TestConnectionClosedWhileIdleIsNotUsed: a server that closes its idle
// connections costs the next request nothing but a new connection.
func TestConnectionClosedWhileIdleIsNotUsed(t *testing.T) {
	e := newEcho(t, nil)
	tr, _ := newTransport()
	c := &http.Client{Transport: tr}
	for i := range 3 {
		if got := do(t, c, http.MethodPut, e.srv.URL+"/o", []byte("hi")).body; string(got) != "hi" {
			t.Fatalf("PUT %d: %q", i, got)
		}
		e.srv.CloseClientConnections()
	}
	if n := e.conns.Load(); n != 3 {
		t.Errorf("3 requests, each after the server closed the last connection, opened %d connections; want 3", n)
	}
}

// TestRequestSentIntoAClosedConnectionGoesAgain: a connection the server
// closes between the check and the request fails before any answer; a GET
// goes again, once, on a new connection. A PUT does not: the transformer
// may have died serving it, and an object is never sent twice.
func TestRequestSentIntoAClosedConnectionGoesAgain(t *testing.T) {
	e := newEcho(t, nil)
	tr, _ := newTransport()
	c := &http.Client{Transport: tr}
	do(t, c, http.MethodPut, e.srv.URL+"/o", []byte("first"))
	breakIdle(tr)
	if a := do(t, c, http.MethodGet, e.srv.URL+"/o", nil); a.status != 200 || a.header.Get("X-Method") != "GET" {
		t.Errorf("GET after the connection broke: %d %q", a.status, a.header)
	}
	if n := e.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
	breakIdle(tr)
	req, _ := http.NewRequest(http.MethodPut, e.srv.URL+"/o", strings.NewReader("second"))
	if err := doErr(c, req); err == nil {
		t.Error("a PUT on a connection that broke was sent again")
	}
	if n := e.conns.Load(); n != 2 {
		t.Errorf("%d connections after the PUT, want still 2", n)
	}
}

// TestGETGoesAgainOnlyOnceAndOnlyBeforeAnyAnswerOnAKeptConnection: the retry
// is for a kept connection the server closed while it sat idle. A new
// connection that fails, an answer cut after its first bytes, and a second
// broken kept connection are each the request's failure, not sent again.
func TestGETGoesAgainOnlyOnceAndOnlyBeforeAnyAnswerOnAKeptConnection(t *testing.T) {
	const (
		answer = iota
		closeUnanswered
		closeMidAnswer
	)
	var calls atomic.Int64
	var mode atomic.Int32
	e := newEcho(t, func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		m := mode.Load()
		if m == answer {
			io.WriteString(w, "ok")
			return
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		if m == closeMidAnswer {
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Le")
			buf.Flush()
		}
		conn.Close()
	})
	get := func(c *http.Client) error {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL, nil)
		return doErr(c, req)
	}

	// A new connection closed with no answer: not sent again.
	tr, _ := newTransport()
	c := &http.Client{Transport: tr}
	mode.Store(closeUnanswered)
	if err := get(c); err == nil || calls.Load() != 1 {
		t.Errorf("GET on a new connection closed unanswered: %v after %d requests; want its failure after 1", err, calls.Load())
	}

	// A kept connection cut after the first bytes of the answer: not sent again.
	calls.Store(0)
	mode.Store(answer)
	do(t, c, http.MethodGet, e.srv.URL, nil) // read to its end: the connection is kept
	mode.Store(closeMidAnswer)
	if err := get(c); err == nil || calls.Load() != 2 {
		t.Errorf("GET whose answer was cut: %v after %d requests; want its failure after 2", err, calls.Load())
	}

	// Two kept connections, both broken: the GET goes again once, on the
	// second, and fails there instead of dialling a third.
	tr, _ = newTransport()
	c = &http.Client{Transport: tr}
	mode.Store(answer)
	bodies := []io.ReadCloser{open(t, c, e.srv.URL), open(t, c, e.srv.URL)} // two at once: two connections
	for _, b := range bodies {
		io.Copy(io.Discard, b)
		b.Close()
	}
	if idle := breakIdle(tr); idle != 2 {
		t.Fatalf("%d idle connections, want 2", idle)
	}
	conns := e.conns.Load()
	if err := get(c); err == nil {
		t.Error("a GET that met two broken kept connections succeeded; want it to fail after going again once")
	}
	if n := e.conns.Load(); n != conns {
		t.Errorf("the GET dialled %d new connections, want none", n-conns)
	}
}

// TestEndedContextSendsNothing: a request whose context already ended
// fails with its cause before it takes a connection.
func TestEndedContextSendsNothing(t *testing.T) {
	var requests atomic.Int64
	e := newEcho(t, func(w http.ResponseWriter, _ *http.Request) { requests.Add(1) })
	tr, _ := newTransport()
	c := &http.Client{Transport: tr}
	// A first request leaves a kept connection, which an ended request must not take either.
	do(t, c, http.MethodGet, e.srv.URL, nil)
	cause := errors.New("client went away")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL, nil)
	if err := doErr(c, req); !errors.Is(err, cause) {
		t.Errorf("request after its context ended: %v, want the cause", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want only the first", n)
	}
	if n := e.conns.Load(); n != 1 {
		t.Errorf("%d connections, want only the first's", n)
	}
}

// stalledBody yields its first bytes, then fails once ctx has ended, as a
// client's body that stops coming does when its object's time is up.
type stalledBody struct {
	ctx     context.Context
	started chan struct{} // closed by the first read
}

func (b *stalledBody) Read(p []byte) (int, error) {
	select {
	case <-b.started:
	default:
		close(b.started)
		return copy(p, "half"), nil
	}
	<-b.ctx.Done()
	return 0, errors.New("read on a closed body")
}

// TestBodyStalledPastItsContextFailsWithTheCause: a body read straight into
// the request fails with its context's cause once the context has ended,
// not with the body's own error, and nothing is sent.
func TestBodyStalledPastItsContextFailsWithTheCause(t *testing.T) {
	e := newEcho(t, nil)
	tr, fb := newTransport()
	cause := errors.New("object timeout")
	ctx, cancel := context.WithCancelCause(context.Background())
	body := &stalledBody{ctx: ctx, started: make(chan struct{})}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, e.srv.URL, body)
	req.ContentLength = 8
	go func() {
		// Ends the context once the body has begun to be read: Read blocks
		// until then, so the order, not the time, decides the outcome.
		<-body.started
		cancel(cause)
	}()
	if err := doErr(&http.Client{Transport: tr}, req); !errors.Is(err, cause) {
		t.Errorf("stalled body: %v, want the context's cause", err)
	}
	if n := e.conns.Load() + fb.n.Load(); n != 0 {
		t.Errorf("%d connections or fallback requests, want none", n)
	}
}

// closedOnWrite is a connection whose peer went away: it drops what is
// written and reads end of file.
// breakIdle makes every idle connection of tr one whose check passes but
// whose server end is gone, and returns how many there were.
func breakIdle(tr *Transport) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for _, cs := range tr.idle {
		for _, cn := range cs {
			cn.nc = &closedOnWrite{Conn: cn.nc}
			n++
		}
	}
	return n
}

type closedOnWrite struct{ net.Conn }

func (c *closedOnWrite) Write(b []byte) (int, error) { c.Close(); return len(b), nil }

// TestAnswerHeadersBounded: an answer whose headers pass MaxHeaderBytes
// fails with ErrHeaderTooLarge and its connection is not kept.
func TestAnswerHeadersBounded(t *testing.T) {
	var pad atomic.Bool
	e := newEcho(t, func(w http.ResponseWriter, r *http.Request) {
		if pad.Load() {
			for i := range 64 {
				w.Header().Set(fmt.Sprintf("X-Pad-%d", i), strings.Repeat("p", 1000))
			}
		}
		io.WriteString(w, "ok")
	})
	tr, _ := newTransport()
	c := &http.Client{Transport: tr}
	pad.Store(true)
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL, nil)
	if err := doErr(c, req); !errors.Is(err, ErrHeaderTooLarge) {
		t.Fatalf("answer with 64 KB of headers: %v, want ErrHeaderTooLarge", err)
	}
	pad.Store(false)
	if got := do(t, c, http.MethodGet, e.srv.URL, nil).body; string(got) != "ok" {
		t.Errorf("next answer: %q", got)
	}
	// Headers just within the bound are read as any.
	e2 := newEcho(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Pad", strings.Repeat("p", int(tr.MaxHeaderBytes)-200))
		io.WriteString(w, "ok")
	})
	if got := do(t, c, http.MethodGet, e2.srv.URL, nil).body; string(got) != "ok" {
		t.Errorf("answer with headers within the bound: %q", got)
	}
	if n := e.conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2: the one that failed is not kept", n)
	}
}

// TestContextEndCutsARequestWaitingForItsAnswer: a transformer that never
// answers holds its request until the request's context ends, which fails
// it with the context's cause; the connection is not kept.
func TestContextEndCutsARequestWaitingForItsAnswer(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{})
	e := newEcho(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			close(entered)
			<-release
		}
		io.WriteString(w, "ok")
	})
	defer close(release)
	tr, _ := newTransport()
	c := &http.Client{Transport: tr}
	cause := errors.New("the object's timeout passed")
	ctx, cancel := context.WithCancelCause(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/stall", nil)
	done := make(chan error, 1)
	go func() {
		done <- doErr(c, req)
	}()
	<-entered
	cancel(cause)
	if err := <-done; !errors.Is(err, cause) {
		t.Errorf("stalled request: %v, want the context's cause", err)
	}
	if got := do(t, c, http.MethodGet, e.srv.URL+"/", nil).body; string(got) != "ok" {
		t.Errorf("next request: %q", got)
	}
}

// TestContextEndCutsABodyBeingRead: the context's end fails a read of the
// answer's body with its cause.
func TestContextEndCutsABodyBeingRead(t *testing.T) {
	release := make(chan struct{})
	e := newEcho(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "part")
		w.(http.Flusher).Flush()
		<-release
	})
	defer close(release)
	tr, _ := newTransport()
	cause := errors.New("client went away")
	ctx, cancel := context.WithCancelCause(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL, nil)
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 4)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "part" {
		t.Fatalf("first part: %q %v", buf, err)
	}
	cancel(cause)
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, cause) {
		t.Errorf("reading past the context's end: %v, want its cause", err)
	}
}

// TestUnreadOrClosingAnswersAreNotKept: an answer closed before its end, or
// one that says Connection: close, leaves no connection for the next
// request; one read to its end does.
func TestUnreadOrClosingAnswersAreNotKept(t *testing.T) {
	e := newEcho(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		w.Write(bytes.Repeat([]byte("z"), 100<<10))
	})
	tr, _ := newTransport()
	c := &http.Client{Transport: tr}
	open(t, c, e.srv.URL+"/unread").Close()
	if n := idle(tr); n != 0 {
		t.Errorf("an answer closed unread left %d idle connections, want 0", n)
	}
	do(t, c, http.MethodGet, e.srv.URL+"/close", nil)
	if n := idle(tr); n != 0 {
		t.Errorf("an answer with Connection: close left %d idle connections, want 0", n)
	}
	do(t, c, http.MethodGet, e.srv.URL+"/whole", nil)
	do(t, c, http.MethodGet, e.srv.URL+"/whole", nil)
	if n := idle(tr); n != 1 {
		t.Errorf("%d idle connections after whole answers, want 1", n)
	}
	if n := e.conns.Load(); n != 3 {
		t.Errorf("%d connections, want 3: unread, close, then one for both whole answers", n)
	}
}

// TestIdleConnectionsBounded: past MaxIdlePerHost, the longest idle
// connection is closed; past IdleTimeout, all are.
func TestIdleConnectionsBounded(t *testing.T) {
	e := newEcho(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tr, _ := newTransport()
	tr.MaxIdlePerHost = 2
	c := &http.Client{Transport: tr}
	// Four answers open at once take four connections; read to their
	// ends, they come back to the pool one after the other.
	bodies := make([]io.ReadCloser, 4)
	conns := make([]*conn, 4)
	for i := range bodies {
		bodies[i] = open(t, c, e.srv.URL)
		b, ok := bodies[i].(*body)
		if !ok {
			t.Fatalf("answer body is a %T, want the pool's *body", bodies[i])
		}
		conns[i] = b.c
	}
	for _, b := range bodies {
		io.Copy(io.Discard, b)
		b.Close()
	}
	if n := idle(tr); n != 2 {
		t.Errorf("%d idle connections, want MaxIdlePerHost 2", n)
	}
	// The two that came back last are kept; the oldest went.
	tr.mu.Lock()
	for _, cs := range tr.idle {
		for _, cn := range cs {
			if cn != conns[2] && cn != conns[3] {
				t.Errorf("an idle connection that came back early was kept over the last two")
			}
		}
	}
	tr.mu.Unlock()
	tr.mu.Lock()
	early := tr.sweepLocked(time.Now())
	tr.mu.Unlock()
	if len(early) != 0 || idle(tr) != 2 {
		t.Errorf("a sweep before IdleTimeout took %d, left %d idle; want 0, 2", len(early), idle(tr))
	}
	tr.mu.Lock()
	stale := tr.sweepLocked(time.Now().Add(tr.idleTimeout() + time.Second))
	tr.mu.Unlock()
	if len(stale) != 2 || idle(tr) != 0 {
		t.Errorf("after IdleTimeout: swept %d, %d left idle; want 2, 0", len(stale), idle(tr))
	}
}

func idle(tr *Transport) int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for _, cs := range tr.idle {
		n += len(cs)
	}
	return n
}

// TestIdleConnectionsSweptWithoutTraffic: connections idle past
// IdleTimeout are closed by the pool's timer, with no request to trigger
// it.
func TestIdleConnectionsSweptWithoutTraffic(t *testing.T) {
	e := newEcho(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tr, _ := newTransport()
	tr.IdleTimeout = time.Millisecond
	c := &http.Client{Transport: tr}
	// Twice: the timer comes again for connections kept after a sweep.
	for round := range 2 {
		do(t, c, http.MethodGet, e.srv.URL, nil)
		// Polled, not timed: the test fails only if the sweep never comes.
		swept := false
		for range 10000 {
			if swept = idle(tr) == 0; swept {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if !swept {
			t.Fatalf("round %d: %d connections still idle long after IdleTimeout", round, idle(tr))
		}
	}
	// A connection that is not yet stale when the timer comes is swept by
	// the timer's next round, with no traffic in between: A comes back,
	// then B half an IdleTimeout later, so the first sweep finds only A
	// stale (on a machine slow enough to miss that, the test proves less,
	// never fails wrongly).
	tr.IdleTimeout = 100 * time.Millisecond
	a, b := open(t, c, e.srv.URL), open(t, c, e.srv.URL)
	io.Copy(io.Discard, a)
	a.Close()
	time.Sleep(tr.IdleTimeout / 2)
	io.Copy(io.Discard, b)
	b.Close()
	for range 10000 {
		if idle(tr) == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if n := idle(tr); n != 0 {
		t.Fatalf("%d connections still idle long after IdleTimeout: the timer did not come again", n)
	}
	// Swept is closed: the server sees every connection end.
	for range 10000 {
		if e.closed.Load() == 4 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("the server saw %d of the 4 swept connections closed", e.closed.Load())
}

// TestHostWithoutAPortDialsPort80: a URL that names no port is dialled on
// HTTP's, as net/http does; the dial is not given a bare host.
func TestHostWithoutAPortDialsPort80(t *testing.T) {
	for url, want := range map[string]string{
		"http://10.1.2.3/v1/inflight/x":    "10.1.2.3:80",
		"http://[fd00::1]/v1/inflight/x":   "[fd00::1]:80",
		"http://10.1.2.3:8080/v1/inflight": "10.1.2.3:8080",
	} {
		var dialed string
		tr := &Transport{Fallback: http.DefaultTransport, Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			dialed = addr
			return nil, errors.New("not dialling in a test")
		}}
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
			t.Errorf("%s: a failed dial answered", url)
		}
		if dialed != want {
			t.Errorf("%s: dialled %q, want %q", url, dialed, want)
		}
	}
}

// failingBody fails with err after its first bytes, and with another error
// if it is read again: the first failure is the one to report.
type failingBody struct {
	err          error
	sent, failed bool
}

func (b *failingBody) Read(p []byte) (int, error) {
	switch {
	case !b.sent:
		b.sent = true
		return copy(p, "half"), nil
	case !b.failed:
		b.failed = true
		return 0, b.err
	}
	return 0, errors.New("read again after failing")
}

// TestBodyErrorIsReturnedAsItself: a body that fails while its context is
// alive fails the request with its own error, which callers classify
// (errors.Is), and nothing is sent.
func TestBodyErrorIsReturnedAsItself(t *testing.T) {
	e := newEcho(t, nil)
	tr, fb := newTransport()
	tooLarge := errors.New("object exceeds the size limit")
	req, _ := http.NewRequest(http.MethodPut, e.srv.URL, &failingBody{err: tooLarge})
	req.ContentLength = 8
	if err := doErr(&http.Client{Transport: tr}, req); !errors.Is(err, tooLarge) {
		t.Errorf("failing body: %v, want the body's own error", err)
	}
	if n := e.conns.Load() + fb.n.Load(); n != 0 {
		t.Errorf("%d connections or fallback requests, want none", n)
	}
}
