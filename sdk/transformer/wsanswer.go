package transformer

import (
	"context"
	"io"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/ws"
)

// answer transforms one object and writes its answer. An error it returns
// ends the session; a failed object is answered with an error message.
func (s *wsSession) answer(ctx context.Context, obj wsObject) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	failed, err := s.transform(ctx, obj)
	if err != nil {
		return err
	}
	if obj.body != nil {
		// The next message can only be read once this one is consumed.
		if _, err := io.Copy(io.Discard, obj.body); err != nil {
			return err
		}
	}
	if failed != nil {
		s.h.log.Debug("object failed", "object", obj.ctrl.Object, "error", failed)
		return s.conn.Send(ws.Text, wire.MarshalError(failed.Error()))
	}
	return nil
}

// transform runs the Func on obj and writes a successful result. failed is
// the object's error, not yet answered; err is a session-ending error.
func (s *wsSession) transform(ctx context.Context, obj wsObject) (failed, err error) {
	if obj.ctrl.Object == "" {
		return wire.ErrNoObject, nil
	}
	var in io.ReadCloser = obj.body
	if obj.body == nil {
		if in, failed = s.h.openFQN(obj.ctrl.FQN); failed != nil {
			return failed, nil
		}
	}
	defer in.Close()
	out, failed := s.h.fn(ctx, in, obj.ctrl.Object, obj.ctrl.Args)
	if failed != nil {
		return failed, nil
	}
	defer closeResult(out)
	return s.writeResult(out)
}

// writeResult sends out as one binary message; see transform for the results.
func (s *wsSession) writeResult(out io.Reader) (failed, err error) {
	buf := getBuffer()
	defer putBuffer(buf)
	s.conn.LockWrite()
	defer s.conn.UnlockWrite()
	started, srcErr, dstErr := s.conn.WriteFrom(ws.Binary, out, *buf)
	switch {
	case dstErr != nil:
		return nil, dstErr
	case srcErr != nil && !started:
		return srcErr, nil
	case srcErr != nil:
		return nil, resultError{srcErr}
	}
	return nil, nil
}
