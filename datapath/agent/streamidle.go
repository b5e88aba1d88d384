package agent

import (
	"fmt"
	"sync"
	"time"

	"github.com/mlkube/mlkube/internal/ws"
)

// streamIdle closes a client stream on which nothing happens for a while:
// no object in flight and no new one from the client. An idle stream holds
// a slot of Options.MaxStreams and its buffers for nothing.
type streamIdle struct {
	timeout time.Duration
	mu      sync.Mutex
	busy    int // objects in flight
	timer   *time.Timer
}

// watchIdle starts the idle timer of conn.
func (a *Agent) watchIdle(conn *ws.Conn) *streamIdle {
	s := &streamIdle{timeout: a.opts.StreamIdleTimeout}
	reason := fmt.Sprintf("idle: no object for %s; reconnect to send more", s.timeout)
	s.timer = time.AfterFunc(s.timeout, func() {
		_ = a.panics.Call("stream idle", func() { conn.Close(ws.StatusGoingAway, reason) }) // reported by call
	})
	return s
}

// begin marks an object in flight: the stream is not idle until its
// answer has been written.
func (s *streamIdle) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy == 0 {
		s.timer.Stop()
	}
	s.busy++
}

// end marks an object answered (or given up).
func (s *streamIdle) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy--; s.busy == 0 {
		s.timer.Reset(s.timeout)
	}
}

func (s *streamIdle) stop() { s.timer.Stop() }

// pingStream pings the client every Options.PingInterval until the stream
// ends: a client that went away without a close is noticed by the write
// timeout, and proxies on the way see traffic.
func (a *Agent) pingStream(conn *ws.Conn) {
	a.panics.GoSafe("stream pinger", func() {
		tick := time.NewTicker(a.opts.PingInterval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if conn.Ping() != nil {
					return
				}
			case <-conn.Done():
				return
			}
		}
	})
}
