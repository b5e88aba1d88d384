package ws

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestWriteTimeoutClosesTheConnection: a peer that stops reading costs a
// writer at most the write timeout, after which the connection is closed
// for its reader and writers too.
func TestWriteTimeoutClosesTheConnection(t *testing.T) {
	ours, peer := net.Pipe() // every write waits for a read that never comes
	defer peer.Close()
	c := newConn(ours, nil, false)
	c.SetWriteTimeout(time.Millisecond)
	if err := c.Send(Binary, payload(writeBufferSize*2)); err == nil {
		t.Fatal("a write to a peer that does not read succeeded")
	}
	<-c.Done()
	if err := c.Send(Text, []byte("after")); err == nil {
		t.Error("Send after a write timeout succeeded")
	}
	if _, _, err := c.NextReader(); err == nil {
		t.Error("NextReader after a write timeout succeeded")
	}
}

// TestPing sends a ping frame that the peer reads at once.
func TestPing(t *testing.T) {
	ours, peer := net.Pipe()
	defer peer.Close()
	c := newConn(ours, nil, false)
	defer c.CloseNow()
	sent := make(chan error, 1)
	go func() { sent <- c.Ping() }()
	h, err := readHeader(bufio.NewReader(peer), false)
	if err != nil || h.op != opPing || !h.fin || h.length != 0 {
		t.Errorf("peer read %+v, %v; want an empty ping", h, err)
	}
	if err := <-sent; err != nil {
		t.Error(err)
	}
}
