package transformertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/mlkube/mlkube/controller/datapath/wire"
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
	conn *websocket.Conn
}

// DialWS connects to the ws endpoint of the transformer at baseURL
// ("http://host:port").
func DialWS(ctx context.Context, baseURL string) (*WSClient, error) {
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(baseURL, "http")+wire.PathWS, nil)
	if err != nil {
		return nil, err
	}
	conn.SetReadLimit(-1)
	return &WSClient{conn: conn}, nil
}

// Do sends one object and copies its result to out. in is the object's bytes,
// or nil when ctrl.FQN names a file. A failed object returns a *RemoteError
// and leaves the connection usable; when ctx ends, the connection is closed.
func (c *WSClient) Do(ctx context.Context, ctrl wire.Control, in io.Reader, out io.Writer) error {
	// The library closes the connection when an operation's context ends and
	// arms a timer per frame for cancellable contexts: use Background for the
	// operations and close on ctx once.
	stop := context.AfterFunc(ctx, func() { c.conn.CloseNow() })
	defer stop()
	data, err := wire.MarshalControl(ctrl)
	if err != nil {
		return err
	}
	if err := c.conn.Write(context.Background(), websocket.MessageText, data); err != nil {
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
	w, err := c.conn.Writer(context.Background(), websocket.MessageBinary)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, in)
	return errors.Join(err, w.Close())
}

func (c *WSClient) receive(out io.Writer) error {
	typ, r, err := c.conn.Reader(context.Background())
	if err != nil {
		return err
	}
	if typ == websocket.MessageBinary {
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
	return c.conn.Close(websocket.StatusNormalClosure, "")
}
