package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"

	"github.com/mlkube/mlkube/datapath/internal/dataroot"
	"github.com/mlkube/mlkube/internal/egress"
	"github.com/mlkube/mlkube/internal/status"
)

// input is the object one stage of a pipeline transforms. Either local or
// body says where its bytes are.
type input struct {
	object, args string
	// local: the bytes are the file object of data, the request's
	// namespace's part of the data root.
	local bool
	data  *dataroot.Namespace
	// src, when set, is a presigned GET of the object in a store, which
	// an hpull transformer fetches itself: no bytes pass the agent.
	src string
	// body holds the bytes; size is their length, -1 when unknown.
	body io.Reader
	size int64
	// wsConns are the ws connections the object's earlier stages use.
	wsConns *[]*wsConn
}

// limitedBody fails reads with err once more than limit bytes came through
// and, when exceeded is set, remembers it there, so that an error surfacing
// anywhere downstream (a transport that sent the body, a ws connection) is
// still answered with err's status.
type limitedBody struct {
	r        io.Reader
	left     int64
	err      error
	exceeded *atomic.Bool
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.left < 0 {
		return l.r.Read(p)
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		if l.exceeded != nil {
			l.exceeded.Store(true)
		}
		return 0, l.err
	}
	return n, err
}

// sizeLimit is the agent's bound on an object (--max-object-size), the same on every path an
// object takes: relayed, read from the data root, fetched by the transformer, stored.
type sizeLimit struct {
	max int64 // negative: no limit
	err error // the 413 that names the limit, the node and the flag
}

func newSizeLimit(max int64, node string) sizeLimit {
	return sizeLimit{max, status.With(http.StatusRequestEntityTooLarge, fmt.Errorf(
		"object is over the limit of %d bytes of node %s's agent (--max-object-size)", max, node))}
}

// over reports whether an object of size bytes is past the limit; an unknown size (-1) is not.
func (l sizeLimit) over(size int64) bool {
	return l.max >= 0 && size > l.max
}

// wrap holds r to the limit: a read past it fails with l.err, remembered in exceeded when set.
func (l sizeLimit) wrap(r io.Reader, exceeded *atomic.Bool) io.Reader {
	if l.max < 0 {
		return r
	}
	return &limitedBody{r: r, left: l.max, err: l.err, exceeded: exceeded}
}

// checkSrc refuses a ?src= that is not an absolute http(s) URL (400), then
// one the operator's policy does not allow (403).
func (a *Agent) checkSrc(src string) error {
	u, err := url.Parse(src)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return status.BadRequest(fmt.Errorf("src %q is not an http(s) URL", src))
	}
	return srcRefused(a.opts.Src.CheckURL(src))
}

// srcRefused answers a refusal of the ?src= policy 403: the caller asked
// for what the operator did not allow.
func srcRefused(err error) error {
	if errors.Is(err, egress.ErrRefused) {
		return status.With(http.StatusForbidden, err)
	}
	return err
}

// fetch GETs the object at src within the ?src= policy: 404 passes on,
// other failures are 502. An answer other than 200 is reported by its
// status only: its body is the source's, not something to hand the caller.
func (a *Agent) fetch(ctx context.Context, src string) (io.ReadCloser, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, 0, status.BadRequest(err)
	}
	resp, err := a.src.Do(req)
	if err != nil {
		return nil, 0, srcRefused(fmt.Errorf("fetch src: %w", err))
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, resp.ContentLength, nil
	}
	resp.Body.Close()
	err = fmt.Errorf("fetch src: the source answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if resp.StatusCode == http.StatusNotFound {
		return nil, 0, status.NotFound(err)
	}
	return nil, 0, status.With(http.StatusBadGateway, err)
}

// openBytes returns the bytes of in, within the size limit.
func (a *Agent) openBytes(in input, exceeded *atomic.Bool) (io.ReadCloser, int64, error) {
	var rc io.ReadCloser
	size := in.size
	switch {
	case in.local:
		f, n, err := in.data.Open(in.object)
		if err != nil {
			return nil, 0, err
		}
		rc, size = f, n
	default:
		rc = io.NopCloser(in.body)
	}
	if a.size.over(size) {
		rc.Close()
		return nil, 0, a.size.err
	}
	return readCloser{a.size.wrap(rc, exceeded), rc}, size, nil
}

// guardedBody is a request body that can be cut off: once Close returns,
// no Read of the body is in progress or will be. A transport may read a
// request body after its response arrived, and net/http forbids reading a
// server request body after the handler returned.
type guardedBody struct {
	mu     sync.Mutex
	r      io.Reader
	c      io.Closer
	closed bool
	eof    bool // read to its end, and closed then
}

var errBodyClosed = errors.New("object body closed")

func (g *guardedBody) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.eof {
		return 0, io.EOF
	}
	if g.closed {
		return 0, errBodyClosed
	}
	n, err := g.r.Read(p)
	if err == io.EOF {
		// Read whole (a small object goes out with its request): its file
		// need not stay open while the transformer works on it.
		g.closed, g.eof = true, true
		g.c.Close()
	}
	return n, err
}

func (g *guardedBody) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	return g.c.Close()
}

type readCloser struct {
	io.Reader
	io.Closer
}
