package transformer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/mlkube/mlkube/controller/datapath/wire"
)

// errShuttingDown refuses new WebSocket sessions once shutdown has started.
var errShuttingDown = StatusError(http.StatusServiceUnavailable, errors.New("transformer is shutting down"))

// wsSession serves the ws mechanism on one connection. Two goroutines share
// it: readLoop reads control and data messages and hands objects over in
// order; run transforms them and writes the answers. Reading ahead is what
// lets a session notice that its client has gone while a Func is still busy,
// and cancel the Func's context.
//
// coder/websocket closes a connection when the context of a read or a write
// ends, and arms a timer for every frame read or written with a cancellable
// context. The session therefore reads and writes with context.Background()
// and ties the connection's lifetime to its context once, in run, by closing
// the hijacked network connection: the library's CloseNow would wait for a
// close handshake in progress, which a client that stopped reading never
// completes.
type wsSession struct {
	h    *Handler
	conn *websocket.Conn
	raw  net.Conn
}

// wsObject is one object announced on a session.
type wsObject struct {
	ctrl wire.Control
	// body is the object's data message; nil when ctrl.FQN names a file.
	body *wsBody
}

// resultError is a transformation that failed after its binary answer
// started; it can only be reported by closing the connection.
type resultError struct{ err error }

func (e resultError) Error() string { return "transformation failed mid-answer: " + e.err.Error() }

func (h *Handler) serveWS(w http.ResponseWriter, r *http.Request) {
	if !h.sessions.add() {
		writeError(w, errShuttingDown)
		return
	}
	defer h.sessions.done()
	rec := &hijackRecorder{ResponseWriter: w}
	conn, err := websocket.Accept(rec, r, nil)
	if err != nil {
		return // Accept has answered the request
	}
	// Objects are unbounded, as on hpush; control messages are bounded
	// where they are read.
	conn.SetReadLimit(-1)
	(&wsSession{h: h, conn: conn, raw: rec.conn}).run()
}

func (s *wsSession) run() {
	ctx, cancel := context.WithCancel(s.h.sessions.ctx)
	stop := context.AfterFunc(ctx, func() { s.raw.Close() })
	objs := make(chan wsObject)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		s.readLoop(ctx, cancel, objs)
	}()
	defer func() {
		cancel()
		<-readDone
		stop()
		s.conn.CloseNow() // releases the library's buffers
	}()
	for {
		select {
		case obj, ok := <-objs:
			if !ok {
				return
			}
			if err := s.answer(ctx, obj); err != nil {
				s.h.log.Warn("ws session ends", "object", obj.ctrl.Object, "error", err)
				if re, ok := errors.AsType[resultError](err); ok {
					s.conn.Close(websocket.StatusInternalError, closeReason(re.Error()))
				}
				return
			}
		case <-s.h.sessions.drain:
			s.conn.Close(websocket.StatusGoingAway, "transformer shutting down")
			return
		}
	}
}

// closeReason fits a reason into a close frame, which allows 123 bytes of
// UTF-8.
func closeReason(s string) string {
	const limit = 123
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "")
}
