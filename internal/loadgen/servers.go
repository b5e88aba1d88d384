package loadgen

import (
	"io"
	"net"
	"net/http"
	"sync"

	"github.com/mlkube/mlkube/internal/ws"
)

// Echo is the bare echo: a PUT's result is its body, copied back while it still streams in.
func Echo(w http.ResponseWriter, r *http.Request) {
	// Go's HTTP/1 server would otherwise close the rest of the body when the answer starts.
	_ = http.NewResponseController(w).EnableFullDuplex()
	_, _ = io.Copy(w, r.Body)
}

// WSEcho answers every message with its bytes over mlkube's own WebSocket, streamed as the SDK
// streams a result: the bare WebSocket the agent's stream is measured against.
func WSEcho(w http.ResponseWriter, r *http.Request) {
	c, err := ws.Accept(w, r)
	if err != nil {
		return
	}
	defer c.CloseNow()
	buf := make([]byte, checkBufferSize)
	for {
		typ, msg, err := c.NextReader()
		if err != nil {
			return
		}
		c.LockWrite()
		_, srcErr, dstErr := c.WriteFrom(typ, msg, buf)
		c.UnlockWrite()
		if srcErr != nil || dstErr != nil {
			return
		}
	}
}

// Relay forwards every connection ln accepts to backend with io.Copy both ways (splice(2) on
// Linux): the data path built from bare parts. It returns when ln is closed, after closing the
// connections it relays.
func Relay(ln net.Listener, backend string) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
	)
	defer func() {
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		conns[in] = struct{}{}
		mu.Unlock()
		wg.Go(func() {
			relay(in, backend)
			mu.Lock()
			delete(conns, in)
			mu.Unlock()
		})
	}
}

func relay(in net.Conn, backend string) {
	defer in.Close()
	out, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, in)
		closeWrite(out)
		close(done)
	}()
	_, _ = io.Copy(in, out)
	closeWrite(in)
	<-done
}

// closeWrite passes a half close on: the other side sees the end of what was sent.
func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}
