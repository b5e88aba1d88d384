package h1client

import (
	"net"
	"testing"
)

// TestPeerSilent: an idle connection is silent; one with bytes waiting, or
// closed by its peer, is not.
func TestPeerSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if !peerSilent(c) {
		t.Error("an idle connection is not silent")
	}
	if _, err := peer.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return !peerSilent(c) }) {
		t.Error("a connection with a byte waiting is silent")
	}
	buf := make([]byte, 1)
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	peer.Close()
	if !eventually(func() bool { return !peerSilent(c) }) {
		t.Error("a connection its peer closed is silent")
	}
}

// eventually polls cond a bounded number of times: the peer's write or
// close reaches this end of a loopback connection within a few polls, with
// no clock involved.
func eventually(cond func() bool) bool {
	for range 100000 {
		if cond() {
			return true
		}
	}
	return false
}
