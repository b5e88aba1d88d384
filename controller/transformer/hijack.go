package transformer

import (
	"bufio"
	"net"
	"net/http"
)

// hijackRecorder keeps the network connection that websocket.Accept hijacks,
// so that a session can be cut at any moment (see wsSession).
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	h.conn = conn
	return conn, rw, err
}
