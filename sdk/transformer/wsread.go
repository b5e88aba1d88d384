package transformer

import (
	"context"
	"fmt"
	"io"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/ws"
)

// readLoop reads objects until the connection ends, waiting before each read
// until the previous object's data message has been read to its end, as the
// library requires. Once it holds the next object, waiting for its turn, it
// reads no more: a client that goes away then is noticed when its answer is
// written, not by the running Func's context.
func (s *wsSession) readLoop(ctx context.Context, fail context.CancelFunc, objs chan<- wsObject) {
	defer close(objs)
	for {
		obj, err := s.readObject()
		if err != nil {
			if ws.CloseStatus(err) == -1 && ctx.Err() == nil {
				s.h.log.Warn("ws read failed", "error", err)
			}
			fail()
			return
		}
		select {
		case objs <- obj:
		case <-ctx.Done():
			return
		}
		if obj.body != nil {
			select {
			case <-obj.body.done:
			case <-ctx.Done():
				return
			}
		}
	}
}

// readObject reads a control message and, unless it names a file, opens the
// data message that follows. Anything else is a protocol violation that ends
// the session: the stream cannot be resynchronised.
func (s *wsSession) readObject() (wsObject, error) {
	typ, r, err := s.conn.NextReader()
	if err != nil {
		return wsObject{}, err
	}
	if typ != ws.Text {
		return wsObject{}, s.violation("expected a text control message")
	}
	data, err := io.ReadAll(io.LimitReader(r, wire.MaxControlSize+1))
	if err != nil {
		return wsObject{}, err
	}
	if len(data) > wire.MaxControlSize {
		return wsObject{}, s.violation("control message too large")
	}
	ctrl, err := wire.ParseControl(data)
	if err != nil {
		return wsObject{}, s.violation(err.Error())
	}
	obj := wsObject{ctrl: ctrl}
	if ctrl.FQN != "" {
		return obj, nil
	}
	if typ, r, err = s.conn.NextReader(); err != nil {
		return wsObject{}, err
	}
	if typ != ws.Binary {
		return wsObject{}, s.violation("expected a binary data message")
	}
	obj.body = newWSBody(r)
	return obj, nil
}

func (s *wsSession) violation(reason string) error {
	s.conn.Close(ws.StatusPolicyViolation, reason)
	return fmt.Errorf("ws protocol violation: %s", reason)
}
