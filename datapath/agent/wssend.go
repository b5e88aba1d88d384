package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/panics"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/status"
	"github.com/mlkube/mlkube/internal/ws"
)

// do sends one object (body nil when ctrl.FQN names a file) and returns its
// result once the answer starts. The body is sent from another goroutine,
// because the transformer may answer while it still reads. Closing the
// result waits for the body to be sent, so the caller's body is no longer
// read after Close.
func (c *wsConn) do(ctx context.Context, ctrl wire.Control, body io.Reader) (io.ReadCloser, error) {
	p, err := c.start(ctx, ctrl, body)
	if err != nil {
		return nil, err
	}
	return p.wait()
}

// wsPending is an object sent, or being sent, whose answer has not been
// taken yet.
type wsPending struct {
	ctx  context.Context
	call *wsCall
	res  *wsResult
}

// start queues one object and starts sending it; its answer is taken with
// wait. Objects started on one connection are answered in the order they
// were started, so a caller may start several before waiting for the first.
func (c *wsConn) start(ctx context.Context, ctrl wire.Control, body io.Reader) (*wsPending, error) {
	call := &wsCall{answer: make(chan wsAnswer, 1)}
	c.inflight.Add(1)
	sent, err := c.send(call, ctrl, body)
	if err != nil {
		c.inflight.Add(-1)
		return nil, err
	}
	// The object's context ends the connection until its answer is read.
	stop := context.AfterFunc(ctx, func() { c.fail(fmt.Errorf("object %q: %w", ctrl.Object, context.Cause(ctx))) })
	return &wsPending{ctx: ctx, call: call, res: &wsResult{c: c, sent: sent, stop: stop}}, nil
}

// wait returns the object's result once its answer starts.
func (p *wsPending) wait() (io.ReadCloser, error) {
	c, res := p.res.c, p.res
	select {
	case a := <-p.call.answer:
		if a.err != nil {
			res.Close()
			return nil, c.objectError(p.ctx, a.err)
		}
		res.r, res.consumed = a.r, a.consumed
		return res, nil
	case <-c.closed:
		res.Close()
		return nil, c.objectError(p.ctx, c.err)
	}
}

// objectError reports an error of an object whose own context ended as that
// context's error, so that a timeout reads as one.
func (c *wsConn) objectError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// send queues call and writes the control message, then the body in a
// goroutine; the returned channel is closed when the body has been sent (a
// failure closes the connection, which the answer reports).
func (c *wsConn) send(call *wsCall, ctrl wire.Control, body io.Reader) (<-chan struct{}, error) {
	data, err := wire.MarshalControl(ctrl)
	if err != nil {
		return nil, err
	}
	if len(data) > wire.MaxControlSize {
		// Refused before it is queued: the transformer would close the
		// connection, and with it every other object on it.
		return nil, status.BadRequest(fmt.Errorf("control message of %d bytes is over the limit of %d bytes (wire.MaxControlSize); shorten the object name or args", len(data), wire.MaxControlSize))
	}
	c.conn.LockWrite()
	select {
	case <-c.closed:
		c.conn.UnlockWrite()
		return nil, c.err
	case c.queue <- call:
	}
	if err := c.conn.WriteMessage(ws.Text, data); err != nil {
		c.conn.UnlockWrite()
		c.fail(fmt.Errorf("ws write: %w", err))
		return nil, c.err
	}
	sent := make(chan struct{})
	if body == nil {
		c.conn.UnlockWrite()
		close(sent)
		return sent, nil
	}
	c.panics.GoSafe("ws body writer", func() {
		defer close(sent)
		defer c.conn.UnlockWrite()
		// Half a message cannot be taken back: a failure, or a panic,
		// closes the connection before the next sender may write.
		failure := panics.ErrInternal
		defer func() {
			if failure != nil {
				c.fail(failure)
			}
		}()
		buf := bufpool.Objects.Get()
		defer bufpool.Objects.Put(buf)
		_, srcErr, dstErr := c.conn.WriteFrom(ws.Binary, body, *buf)
		failure = errors.Join(srcErr, dstErr)
	})
	return sent, nil
}

// wsResult is the result message of one object.
type wsResult struct {
	c        *wsConn
	r        io.Reader
	consumed chan struct{}
	eof      bool
	sent     <-chan struct{}
	stop     func() bool
	once     sync.Once
}

func (r *wsResult) Read(p []byte) (int, error) {
	if r.eof {
		return 0, io.EOF
	}
	n, err := r.r.Read(p)
	if err == io.EOF {
		r.eof = true
		close(r.consumed)
	} else if err != nil && r.c.broken() {
		err = r.c.err
	}
	return n, err
}

// maxDrain bounds what is read and dropped of a result its reader gave up
// on. Below it, the rest of the message is skipped in the background so the
// objects answered after it on the connection go on; past it, closing the
// connection costs less than the bytes, and those objects fail.
const maxDrain = 4 << 20

// Close releases the connection for the next answer. A result its reader
// gave up on (a destination that refused it, say, over a quota) is drained
// up to maxDrain, since the answers of the other objects in flight on the
// connection wait behind it; a longer one costs the connection.
func (r *wsResult) Close() error {
	r.once.Do(func() {
		if r.r != nil && !r.eof {
			rest, consumed := r.r, r.consumed
			r.c.panics.GoSafe("ws result drain", func() { r.c.drain(rest, consumed) })
		}
		<-r.sent
		r.stop()
		r.c.inflight.Add(-1)
	})
	return nil
}

// drain skips the rest of a result message and releases the connection for
// the next answer, or closes it past maxDrain or on a read error. The
// objects answered next bound how long it may take: their contexts close
// the connection when they end.
func (c *wsConn) drain(rest io.Reader, consumed chan struct{}) {
	n, err := io.Copy(io.Discard, io.LimitReader(rest, maxDrain+1))
	if err != nil || n > maxDrain {
		c.fail(errConnClosed)
		return
	}
	close(consumed)
}
