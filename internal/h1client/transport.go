// Package h1client is the HTTP/1.1 transport of the data path's hops on a
// node (the agent's requests to transformers, a transformer's hpull fetches
// from the agent): a request whose body is small enough to hold makes its
// round trip on the caller's goroutine, over a pooled keep-alive
// connection, the request in one write; any other request goes to a
// fallback transport.
//
// net/http's Transport hands every request to two goroutines of the
// connection (one writes the request, one reads the answer) and wakes the
// caller when headers arrive: three goroutines and their wake-ups for an
// object of a few KiB, about a fifth of the agent's CPU at 4 KiB on the
// cluster. A small body needs no second goroutine: it fits the socket's
// buffers, so writing it whole before reading the answer cannot deadlock
// with a transformer that answers while it reads. Large bodies keep
// net/http's full duplex.
//
// The wire is net/http's own: requests are written by (*http.Request).Write
// and answers parsed by http.ReadResponse. Only the connections are this
// package's.
package h1client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Transport is an http.RoundTripper. Set Fallback, Dial and MaxBody before
// its first request.
type Transport struct {
	// Fallback carries every request this transport does not: a body over
	// MaxBody or of unknown length, or a scheme other than http.
	Fallback http.RoundTripper
	// Dial opens a connection to a host.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxBody is the largest request body sent by this transport.
	MaxBody int64
	// MaxHeaderBytes bounds an answer's status line and headers (default
	// 1 MiB, net/http's is 10 MiB).
	MaxHeaderBytes int64
	// MaxIdlePerHost bounds the idle connections kept per host (default 64).
	MaxIdlePerHost int
	// IdleTimeout closes a connection idle for longer (default 90s).
	IdleTimeout time.Duration

	mu      sync.Mutex
	idle    map[string][]*conn // per host, the longest idle first
	sweeper *time.Timer        // while connections are idle
}

var _ http.RoundTripper = (*Transport)(nil)

// ErrHeaderTooLarge is an answer whose headers pass MaxHeaderBytes.
var ErrHeaderTooLarge = errors.New("the answer's headers exceeded the limit")

// RoundTrip sends req and returns its answer; the answer's body must be
// closed, and its connection is reused once the body was read to its end.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.carries(req) {
		return t.Fallback.RoundTrip(req)
	}
	ctx := req.Context()
	if ctx.Err() != nil {
		closeBody(req)
		return nil, context.Cause(ctx)
	}
	wire, err := encode(req)
	if err != nil {
		return nil, err
	}
	defer putBuffer(wire)
	addr := req.URL.Host
	if req.URL.Port() == "" {
		addr = net.JoinHostPort(req.URL.Hostname(), "80")
	}
	for attempt := 0; ; attempt++ {
		c, err := t.conn(ctx, addr)
		if err != nil {
			return nil, err
		}
		resp, err := c.roundTrip(req, wire.Bytes(), t.maxHeaderBytes())
		// A kept connection that fails before any answer was most likely
		// closed by the transformer as it sat idle, but the transformer may
		// also have died serving the request. As net/http's transport
		// does, only a request that may be served twice goes again, once,
		// on a new connection: hpull's GETs, never an object's PUT.
		if err != nil && c.reused && c.got == 0 && attempt == 0 && ctx.Err() == nil && replayable(req) {
			continue
		}
		return resp, err
	}
}

// replayable is net/http's rule: a request without a body whose method
// is safe to repeat.
func replayable(req *http.Request) bool {
	if req.Body != nil && req.Body != http.NoBody {
		return false
	}
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// carries reports whether req goes on this transport: plain HTTP, no
// protocol upgrade, and a body of known length within MaxBody. net/http
// takes a non-nil body of length 0 for one of unknown length.
func (t *Transport) carries(req *http.Request) bool {
	if req.URL.Scheme != "http" || req.Header.Get("Upgrade") != "" {
		return false
	}
	if req.Body == nil || req.Body == http.NoBody {
		return true
	}
	return req.ContentLength > 0 && req.ContentLength <= t.MaxBody
}

// encode writes req, headers and body, into a pooled buffer and closes its
// body. The body is read straight into the buffer, so a caller hands over
// its client's body as it is rather than reading it into memory first. A
// body that fails to be read after req's context ended (a client that
// stalled past the object's time) fails with the context's cause, as
// net/http's transport reports a body its writer could not finish. Reading
// is not cut by the context: a body that stalls holds the request until it
// goes on or its sender goes away, as it held net/http's writer.
func encode(req *http.Request) (*bytes.Buffer, error) {
	b := buffers.Get().(*bytes.Buffer)
	b.Reset()
	out := req
	var body *recordingBody
	if req.Body != nil && req.Body != http.NoBody {
		// A RoundTripper leaves its caller's request alone: the copy reads
		// the body through a recorder.
		body = &recordingBody{ReadCloser: req.Body}
		copied := *req
		copied.Body = body
		out = &copied
	}
	if err := out.Write(b); err != nil {
		putBuffer(b)
		switch {
		case req.Context().Err() != nil:
			return nil, context.Cause(req.Context())
		case body != nil && body.err != nil:
			// Request.Write hides it in a type of its own, without Unwrap.
			return nil, body.err
		}
		return nil, err
	}
	return b, nil
}

// recordingBody keeps the first error of a request body other than its end.
type recordingBody struct {
	io.ReadCloser
	err error
}

func (r *recordingBody) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBuffer pools b unless one large request grew it: a buffer is kept at
// most as large as the bodies this package is meant for.
func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuffer {
		buffers.Put(b)
	}
}

const maxPooledBuffer = 256 << 10

// CloseIdleConnections closes every idle connection, the fallback's too.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, cs := range idle {
		closeAll(cs)
	}
	if ci, ok := t.Fallback.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}
