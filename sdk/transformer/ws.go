package transformer

import (
	"context"
	"errors"
	"net/http"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/ws"
)

// errShuttingDown refuses new WebSocket sessions once shutdown has started.
var errShuttingDown = StatusError(http.StatusServiceUnavailable, errors.New("transformer is shutting down"))

// wsSession serves the ws mechanism on one connection. Two goroutines share
// it: readLoop reads control and data messages and hands objects over in
// order; run transforms them and writes the answers. Reading ahead is what
// lets a session notice that its client has gone while a Func is still busy,
// and cancel the Func's context. The connection lives as long as the
// session's context.
type wsSession struct {
	h    *Handler
	conn *ws.Conn
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
	conn, err := ws.Accept(w, r)
	if err != nil {
		return // Accept has answered the request
	}
	(&wsSession{h: h, conn: conn}).run()
}

func (s *wsSession) run() {
	ctx, cancel := context.WithCancel(s.h.sessions.ctx)
	stop := context.AfterFunc(ctx, func() { s.conn.CloseNow() })
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
		s.conn.CloseNow()
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
					s.conn.Close(ws.StatusInternalError, re.Error())
				}
				return
			}
		case <-s.h.sessions.drain:
			s.conn.Close(ws.StatusGoingAway, "transformer shutting down")
			return
		}
	}
}
