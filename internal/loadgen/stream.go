package loadgen

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/ws"
)

// MsgClient is a streaming client's connection: it sends objects as messages without waiting and
// receives their results in order.
type MsgClient interface {
	Send(payload []byte) error
	// Receive writes the next result to w.
	Receive(w io.Writer) error
	Close()
}

// Stream sends payload on c while more says so, with up to window results outstanding, checks
// every result as a reader of its own receives it, and returns how many objects completed once
// every result is in.
func Stream(c MsgClient, payload []byte, window int, more func() bool) (int64, error) {
	slots := make(chan struct{}, window)
	failed := make(chan error, 1)
	var done atomic.Bool
	var received atomic.Int64
	go func() {
		chk := NewChecker(payload)
		for {
			chk.Reset()
			err := c.Receive(chk)
			if err == nil {
				err = chk.Complete()
			}
			if err != nil {
				if done.Load() {
					err = nil
				}
				failed <- err
				return
			}
			received.Add(1)
			<-slots
		}
	}()
	acquire := func() error {
		select {
		case slots <- struct{}{}:
			return nil
		case err := <-failed:
			return err
		}
	}
	err := func() error {
		for more() {
			if err := acquire(); err != nil {
				return err
			}
			if err := c.Send(payload); err != nil {
				return err
			}
		}
		// Every result is in once the whole window is free again.
		for range window {
			if err := acquire(); err != nil {
				return err
			}
		}
		return nil
	}()
	done.Store(err == nil)
	c.Close()
	if err != nil {
		return received.Load(), err
	}
	return received.Load(), <-failed
}

// OwnWS is an echo client of mlkube's own WebSocket: each object one binary message.
type OwnWS struct{ C *ws.Conn }

// Send sends one object.
func (c OwnWS) Send(payload []byte) error { return c.C.Send(ws.Binary, payload) }

// Close drops the connection.
func (c OwnWS) Close() { c.C.CloseNow() }

// Receive copies the next message to w.
func (c OwnWS) Receive(w io.Writer) error {
	_, r, err := c.C.NextReader()
	if err == nil {
		_, err = io.Copy(w, r)
	}
	return err
}

// AgentStream is a client of the agent's stream API (wire.PathStream): each object a control
// message naming it, then its bytes; each answer a result or an error message.
type AgentStream struct {
	C *ws.Conn
	// Object names every object sent, and Args are its arguments.
	Object, Args string
}

// StreamURL is the agent's stream API for the Transform namespace/name, at the agent's base URL
// (http://host[:port]).
func StreamURL(base, namespace, name string) string {
	return "ws" + strings.TrimPrefix(base, "http") + wire.PathStream + namespace + "/" + name
}

// DialAgentStream opens a stream of the agent's stream API at url (StreamURL), presenting token
// when set.
func DialAgentStream(ctx context.Context, url, token string) (AgentStream, error) {
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	c, err := ws.DialHeader(ctx, url, h)
	return AgentStream{C: c, Object: "object"}, err
}

// Send sends one object.
func (c AgentStream) Send(payload []byte) error {
	ctrl, err := wire.MarshalControl(wire.Control{Object: c.Object, Args: c.Args})
	if err != nil {
		return err
	}
	c.C.LockWrite()
	defer c.C.UnlockWrite()
	if err := c.C.WriteMessage(ws.Text, ctrl); err != nil {
		return err
	}
	return c.C.WriteMessage(ws.Binary, payload)
}

// Close drops the connection.
func (c AgentStream) Close() { c.C.CloseNow() }

// Receive copies the next result to w, or returns the transformer's error message as an error.
func (c AgentStream) Receive(w io.Writer) error {
	typ, r, err := c.C.NextReader()
	if err != nil {
		return err
	}
	if typ == ws.Binary {
		_, err := io.Copy(w, r)
		return err
	}
	data, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return err
	}
	msg, err := wire.ParseError(data)
	if err != nil {
		return err
	}
	return errors.New(msg)
}
