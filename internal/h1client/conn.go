package h1client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// conn is one keep-alive connection, used by one request at a time.
type conn struct {
	t    *Transport
	host string
	nc   net.Conn
	br   *bufio.Reader
	// limit is what reads may still take from nc: the header bound while
	// an answer's headers are read, unbounded after.
	limit int64
	// got counts the bytes read for the current request; reused says the
	// connection served an earlier one.
	got       int64
	reused    bool
	idleSince time.Time
}

// readBufferSize is what the connection reads ahead: the headers and the
// first bytes of a body in one read. Reads of a larger body go straight into
// the caller's buffer.
const readBufferSize = 16 << 10

func newConn(t *Transport, host string, nc net.Conn) *conn {
	c := &conn{t: t, host: host, nc: nc}
	c.br = bufio.NewReaderSize(c, readBufferSize)
	return c
}

func (c *conn) Read(p []byte) (int, error) {
	if c.limit <= 0 {
		return 0, fmt.Errorf("%w of %d bytes", ErrHeaderTooLarge, c.t.maxHeaderBytes())
	}
	if int64(len(p)) > c.limit {
		p = p[:c.limit]
	}
	n, err := c.nc.Read(p)
	c.limit -= int64(n)
	c.got += int64(n)
	return n, err
}

// maxInformational bounds the 1xx answers skipped before the answer.
const maxInformational = 8

// roundTrip writes the encoded request and reads the answer's headers; the
// answer's body reads from the connection. ctx's end cuts both.
func (c *conn) roundTrip(req *http.Request, wire []byte, maxHeaderBytes int64) (*http.Response, error) {
	ctx := req.Context()
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		c.nc.Close()
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, err
	}
	_, werr := c.nc.Write(wire)
	var resp *http.Response
	for range maxInformational {
		c.limit = maxHeaderBytes
		var err error
		if resp, err = http.ReadResponse(c.br, req); err != nil {
			// An answer that failed to be written is the cause, when
			// there is no answer to tell one.
			if werr != nil {
				err = werr
			}
			return fail(err)
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	c.limit = math.MaxInt64
	if resp.StatusCode < 200 {
		return fail(errors.New("too many informational answers"))
	}
	b := &body{c: c, r: resp.Body, ctx: ctx, stop: stop,
		keep: werr == nil && !resp.Close && !req.Close && resp.StatusCode != http.StatusSwitchingProtocols}
	if resp.Body == http.NoBody {
		b.finish(true)
		return resp, nil
	}
	resp.Body = b
	return resp, nil
}

// alive reports whether an idle connection is still open and silent: a
// transformer that closed it, or wrote to it unasked, has ended it.
func (c *conn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	return peerSilent(c.nc)
}

// body is an answer's body. Read to its end with the connection still
// clean, it hands the connection back for the next request; closed before,
// it closes the connection.
type body struct {
	c    *conn
	r    io.ReadCloser
	ctx  context.Context
	stop func() bool
	keep bool
	done atomic.Bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		b.finish(true)
	case err != nil:
		if b.ctx.Err() != nil {
			err = context.Cause(b.ctx)
		}
		b.finish(false)
	}
	return n, err
}

func (b *body) Close() error {
	b.finish(false)
	return nil
}

// finish ends the request once: the connection goes back to the pool when
// the answer was read whole and ctx's cut can no longer come.
func (b *body) finish(eof bool) {
	if b.done.Swap(true) {
		return
	}
	if b.stop() && eof && b.keep {
		b.c.t.put(b.c)
		return
	}
	b.c.nc.Close()
}
