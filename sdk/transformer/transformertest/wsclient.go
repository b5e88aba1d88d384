package transformertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/ws"
)

// RemoteError is an object the transformer failed: Status is the HTTP status
// (0 over ws) and Message the error text it answered.
type RemoteError struct {
	Status  int
	Message string
}

func (e *RemoteError) Error() string {
	if e.Status == 0 {
		return "transformer: " + e.Message
	}
	return fmt.Sprintf("transformer: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// WSClient is the client side of the ws mechanism: one object at a time on
// one connection.
type WSClient struct {
	conn *ws.Conn
}

// DialWS connects to the ws endpoint of the transformer at baseURL
// ("http://host:port"), presenting token as the node agent's credential
// (none when empty).
func DialWS(ctx context.Context, baseURL, token string) (*WSClient, error) {
	h := http.Header{}
	if token != "" {
		h.Set(wire.HeaderTransformerToken, token)
	}
	conn, err := ws.DialHeader(ctx, "ws"+strings.TrimPrefix(baseURL, "http")+wire.PathWS, h)
	if err != nil {
		return nil, err
	}
	return &WSClient{conn: conn}, nil
}

// Do sends one object and copies its result to out. in is the object's bytes,
// or nil when ctrl.FQN names a file. A failed object returns a *RemoteError
// and leaves the connection usable; when ctx ends, the connection is closed.
func (c *WSClient) Do(ctx context.Context, ctrl wire.Control, in io.Reader, out io.Writer) error {
	stop := context.AfterFunc(ctx, func() { c.conn.CloseNow() })
	defer stop()
	data, err := wire.MarshalControl(ctrl)
	if err != nil {
		return err
	}
	if err := c.conn.Send(ws.Text, data); err != nil {
		return err
	}
	var sent chan error
	if in != nil {
		// The transformer may answer while it still reads: send concurrently.
		sent = make(chan error, 1)
		go func() { sent <- c.send(in) }()
	}
	err = c.receive(out)
	if sent != nil {
		if serr := <-sent; err == nil {
			err = serr
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (c *WSClient) send(in io.Reader) error {
	c.conn.LockWrite()
	defer c.conn.UnlockWrite()
	w := c.conn.MessageWriter(ws.Binary)
	_, err := io.Copy(w, in)
	return errors.Join(err, w.Close())
}

func (c *WSClient) receive(out io.Writer) error {
	typ, r, err := c.conn.NextReader()
	if err != nil {
		return err
	}
	if typ == ws.Binary {
		_, err = io.Copy(out, r)
		return err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	msg, err := wire.ParseError(data)
	if err != nil {
		return err
	}
	return &RemoteError{Message: msg}
}

// Close closes the connection with a normal closure.
func (c *WSClient) Close() error {
	return c.conn.Close(ws.StatusNormalClosure, "")
}
