package ws

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer answers each handshake on loopback with what answer writes,
// given the client's key, and returns the address.
func fakeServer(t *testing.T, answer func(nc net.Conn, key string)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				req, err := http.ReadRequest(bufio.NewReader(nc))
				if err != nil {
					return
				}
				answer(nc, req.Header.Get("Sec-WebSocket-Key"))
			}()
		}
	}()
	return ln.Addr().String()
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	read atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// dialCounting performs the client's handshake with addr through a
// countingConn.
func dialCounting(t *testing.T, addr string) (*Conn, *countingConn, error) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	cc := &countingConn{Conn: nc}
	// Only so that the test ends if the reader does not: nothing is timed.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := clientHandshake(ctx, cc, &url.URL{Scheme: "ws", Host: addr, Path: "/"}, nil)
	return c, cc, err
}

// endlessHeaders writes a 101's status line and then header lines of
// lineSize bytes, made as they are written, until total bytes have gone or
// the client goes away. A lineSize of 0 is one header line without end.
func endlessHeaders(w io.Writer, lineSize, total int) {
	io.WriteString(w, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Pad: ")
	chunk := bytes.Repeat([]byte("a"), 32<<10)
	if lineSize > 0 {
		line := "X-Pad: " + strings.Repeat("a", lineSize-len("X-Pad: \r\n")) + "\r\n"
		chunk = []byte(strings.Repeat(line, len(chunk)/lineSize))
		io.WriteString(w, "a\r\n")
	}
	for sent := 0; sent < total; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
	io.WriteString(w, "\r\n\r\n")
}

// TestHandshakeRefusesEndlessHeaders: a server (a tenant's transformer, for
// the agent) that answers with 64 MiB of headers, in one line or in many,
// is refused with an error naming the limit once it passes the bound,
// having had the client read no more than the bound from the connection.
func TestHandshakeRefusesEndlessHeaders(t *testing.T) {
	for _, lineSize := range []int{0, 1 << 10} {
		t.Run(fmt.Sprintf("lines of %d bytes", lineSize), func(t *testing.T) {
			addr := fakeServer(t, func(nc net.Conn, _ string) { endlessHeaders(nc, lineSize, 64<<20) })
			_, cc, err := dialCounting(t, addr)
			if !errors.Is(err, ErrHandshakeTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d bytes", maxHandshakeBytes)) {
				t.Errorf("handshake answered with 64 MiB of headers = %v, want %v naming %d bytes", err, ErrHandshakeTooLarge, maxHandshakeBytes)
			}
			if n := cc.read.Load(); n > maxHandshakeBytes {
				t.Errorf("the client read %d bytes of the answer, want at most %d", n, maxHandshakeBytes)
			}
		})
	}
}

// TestHandshakeRefusesManyHeaderLines: short header lines within the bytes
// are refused past the count of lines.
func TestHandshakeRefusesManyHeaderLines(t *testing.T) {
	addr := fakeServer(t, func(nc net.Conn, key string) {
		io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Accept: "+acceptKey(key)+"\r\n"+strings.Repeat("A: b\r\n", 1000)+"\r\n")
	})
	_, _, err := dialCounting(t, addr)
	if !errors.Is(err, ErrHandshakeTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d lines", maxHandshakeLines)) {
		t.Errorf("handshake answered with 1000 header lines = %v, want %v naming %d lines", err, ErrHandshakeTooLarge, maxHandshakeLines)
	}
}

// TestHandshakeAnswerUpToTheBounds: an answer of exactly the bounds, with a
// frame right behind it, upgrades, and the frame is the first message.
func TestHandshakeAnswerUpToTheBounds(t *testing.T) {
	frame := append(appendHeader(nil, header{fin: true, op: opText, length: 5}), "early"...)
	addr := fakeServer(t, func(nc net.Conn, key string) {
		nc.Write(append(boundedAnswer(key), frame...))
		io.Copy(io.Discard, nc) // until the client closes
	})
	c, _, err := dialCounting(t, addr)
	if err != nil {
		t.Fatalf("handshake of an answer within the bounds: %v", err)
	}
	defer c.CloseNow()
	if _, data := mustRead(c); string(data) != "early" {
		t.Errorf("first message %q, want \"early\"", data)
	}
}

// boundedAnswer is a valid 101 for key of maxHandshakeBytes in
// maxHandshakeLines, the blank line included.
func boundedAnswer(key string) []byte {
	b := []byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Accept: " + acceptKey(key) + "\r\n")
	pads := maxHandshakeLines - 5 // the lines above and the blank one
	for i := range pads {
		size := (maxHandshakeBytes - 2 - len(b)) / (pads - i) // what is left, spread
		b = fmt.Appendf(b, "X-Pad-%02d: ", i)
		b = append(b, bytes.Repeat([]byte("p"), size-len("X-Pad-00: \r\n"))...)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...)
}

func TestBoundedAnswerIsAtTheBounds(t *testing.T) {
	b := boundedAnswer("dGhlIHNhbXBsZSBub25jZQ==")
	if len(b) != maxHandshakeBytes || bytes.Count(b, []byte("\n")) != maxHandshakeLines {
		t.Errorf("bounded answer of %d bytes in %d lines, want %d in %d", len(b), bytes.Count(b, []byte("\n")), maxHandshakeBytes, maxHandshakeLines)
	}
}
