package psrendezvous

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
)

// MsgType says what a [Message] is.
type MsgType string

// Scheduler ↔ server/worker messages, in protocol order.
const (
	// MsgRegister: node → scheduler, first message; Node, and Addr for servers.
	MsgRegister MsgType = "register"
	// MsgProgress: scheduler → nodes whenever a peer registers or reports done
	// before everyone did; Phase and Missing, so every node can name the missing
	// peers when its own deadline expires.
	MsgProgress MsgType = "progress"
	// MsgStart: scheduler → nodes once all registered; Servers.
	MsgStart MsgType = "start"
	// MsgDone: node → scheduler once its part is over.
	MsgDone MsgType = "done"
	// MsgFinish: scheduler → nodes once all reported done.
	MsgFinish MsgType = "finish"
	// MsgAbort: scheduler → nodes when it gives up; Missing, and Reason (its
	// deadline, or SIGTERM).
	MsgAbort MsgType = "abort"
	// MsgReject: either direction; Reason. The receiver gives up.
	MsgReject MsgType = "reject"
)

// Worker ↔ server messages, one pair per connection.
const (
	// MsgPush: worker → server; Node and Values.
	MsgPush MsgType = "push"
	// MsgAggregate: server → worker once all workers pushed; Values and Workers.
	MsgAggregate MsgType = "aggregate"
)

// Message is the one wire type; each MsgType uses a few of its fields.
type Message struct {
	Type    MsgType         `json:"type"`
	Node    string          `json:"node,omitempty"`
	Addr    string          `json:"addr,omitempty"`
	Servers []ServerAddress `json:"servers,omitempty"`
	Phase   string          `json:"phase,omitempty"`
	Missing []string        `json:"missing,omitempty"`
	Values  []int64         `json:"values,omitempty"`
	Workers int             `json:"workers,omitempty"`
	Reason  string          `json:"reason,omitempty"`
}

// ServerAddress is where a server accepts pushes.
type ServerAddress struct {
	Node string `json:"node"`
	Addr string `json:"addr"`
}

// maxMessageBytes bounds one line, so a peer speaking another protocol on the
// port cannot make us buffer without limit.
const maxMessageBytes = 1 << 20

// Conn carries Messages as line-delimited JSON over a net.Conn. Send is safe for
// concurrent use, because the scheduler writes to a node from several events;
// Recv is for one reader.
type Conn struct {
	net.Conn
	mu  sync.Mutex
	in  *bufio.Scanner
	out *json.Encoder
}

// NewConn wraps c.
func NewConn(c net.Conn) *Conn {
	in := bufio.NewScanner(c)
	in.Buffer(make([]byte, 0, 4096), maxMessageBytes)
	return &Conn{Conn: c, in: in, out: json.NewEncoder(c)}
}

// Send writes one message (json.Encoder ends it with a newline).
func (c *Conn) Send(m Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Encode(m)
}

// Recv reads one message; a message without a type is an error.
func (c *Conn) Recv() (Message, error) {
	if !c.in.Scan() {
		if err := c.in.Err(); err != nil {
			return Message{}, err
		}
		return Message{}, errConnClosed
	}
	var m Message
	if err := json.Unmarshal(c.in.Bytes(), &m); err != nil {
		return Message{}, fmt.Errorf("bad message from %s: %w", c.RemoteAddr(), err)
	}
	if m.Type == "" {
		return Message{}, fmt.Errorf("bad message from %s: no type", c.RemoteAddr())
	}
	return m, nil
}

// errConnClosed is a clean end of stream: the peer closed its side.
var errConnClosed = errors.New("connection closed by peer")

// closeOnDone closes c when ctx ends, which is how blocked reads and writes learn
// about cancellation. The returned stop must be called once c is no longer used.
func closeOnDone(ctx context.Context, c net.Conn) (stop func() bool) {
	return context.AfterFunc(ctx, func() { c.Close() })
}
