package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/panics"
	"github.com/mlkube/mlkube/internal/ws"
)

// wsConn is one persistent WebSocket to a transformer, carrying several
// objects at once: a sender writes an object's control and data messages
// while holding the connection's write lock and queues the object, and
// readLoop hands the answers, which come in order, to the queued objects one
// after the other. So objects are pipelined: the next one is on the wire
// while earlier ones are being transformed or answered, and the messages of
// concurrent senders leave in batches.
//
// An object whose context ends closes the whole connection, because its
// messages cannot be taken back; the other objects in flight on it fail too.
type wsConn struct {
	conn   *ws.Conn
	queue  chan *wsCall
	panics *panics.Reporter
	// inflight counts objects sent and not yet answered to the end.
	inflight atomic.Int32

	closeOnce sync.Once
	closed    chan struct{}
	err       error // why the connection closed; set before closed is
}

// wsCall is one object waiting for its answer.
type wsCall struct {
	answer chan wsAnswer
}

type wsAnswer struct {
	r   io.Reader // the result message; nil with err
	err error
	// consumed is closed by the result's reader when the message has been
	// read to its end, so that readLoop reads the next one.
	consumed chan struct{}
}

// maxInflightPerConn bounds the objects queued on one connection.
const maxInflightPerConn = 64

// dialWS connects to the transformer at baseURL, presenting token (none when
// empty) on the upgrade. A transformer that stops reading fails a write after
// writeTimeout, which closes the connection: the pool drops it and later
// objects dial anew.
func dialWS(ctx context.Context, baseURL, token string, writeTimeout time.Duration, p *panics.Reporter) (*wsConn, error) {
	header := http.Header{}
	if token != "" {
		header.Set(wire.HeaderTransformerToken, token)
	}
	conn, err := ws.DialHeader(ctx, "ws"+baseURL[len("http"):]+wire.PathWS, header)
	if err != nil {
		return nil, err
	}
	conn.SetWriteTimeout(writeTimeout)
	c := &wsConn{conn: conn, queue: make(chan *wsCall, maxInflightPerConn), panics: p, closed: make(chan struct{})}
	p.GoSafe("ws read loop", c.readLoop)
	return c, nil
}

// fail closes the connection for err; the first error stays.
func (c *wsConn) fail(err error) {
	c.closeOnce.Do(func() {
		c.err = err
		close(c.closed)
		c.conn.CloseNow()
	})
}

func (c *wsConn) broken() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// readLoop reads the answers in order and hands each to the object queued
// first, waiting until it has been read before reading the next. It keeps a
// read pending while the connection is idle, so that the library answers
// pings and close frames, and a transformer that goes away is noticed
// before the next object is sent to it.
func (c *wsConn) readLoop() {
	defer c.failQueued()
	for {
		a := c.readAnswer()
		if c.broken() {
			return
		}
		var call *wsCall
		select {
		case call = <-c.queue:
		default:
			c.fail(errors.New("ws answer to no object"))
			return
		}
		call.answer <- a
		if a.consumed == nil {
			continue // an error message: the connection goes on
		}
		select {
		case <-a.consumed:
		case <-c.closed:
			return
		}
	}
}

// readAnswer reads the start of one answer: a binary result, whose reader
// it returns, or a text error message.
func (c *wsConn) readAnswer() wsAnswer {
	typ, r, err := c.conn.NextReader()
	if err != nil {
		c.fail(fmt.Errorf("ws read: %w", err))
		return wsAnswer{err: c.err}
	}
	if typ == ws.Binary {
		return wsAnswer{r: r, consumed: make(chan struct{})}
	}
	data, err := io.ReadAll(io.LimitReader(r, maxMessageSize))
	if err != nil {
		c.fail(fmt.Errorf("ws read: %w", err))
		return wsAnswer{err: c.err}
	}
	msg, err := wire.ParseError(data)
	if err != nil {
		c.fail(err)
		return wsAnswer{err: c.err}
	}
	return wsAnswer{err: transformerError(msg)}
}

// failQueued fails the objects still waiting, after the connection closed.
// A sender that queues an object later sees the connection closed while it
// waits for the answer.
func (c *wsConn) failQueued() {
	// The connection is closed already, unless readLoop panicked: no object
	// may wait on it then either.
	c.fail(panics.ErrInternal)
	for {
		select {
		case call := <-c.queue:
			call.answer <- wsAnswer{err: c.err}
		default:
			return
		}
	}
}

// errConnClosed is what objects see when their connection closed under them.
var errConnClosed = errors.New("ws connection closed")
