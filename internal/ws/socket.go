package ws

import (
	"net"
	"sync"
	"time"
)

// socketReader is the socket as the connection's buffered reader sees it.
// CloseNow stops it before it reads the socket to its end itself: two
// goroutines must not share the remaining bytes.
type socketReader struct {
	nc      net.Conn
	mu      sync.Mutex
	active  int // reads under way
	stopped bool
	idle    sync.Cond
}

func newSocketReader(nc net.Conn) *socketReader {
	s := &socketReader{nc: nc}
	s.idle.L = &s.mu
	return s
}

func (s *socketReader) Read(p []byte) (int, error) {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return 0, ErrClosed
	}
	s.active++
	s.mu.Unlock()
	n, err := s.nc.Read(p)
	s.mu.Lock()
	if s.active--; s.active == 0 {
		s.idle.Broadcast()
	}
	s.mu.Unlock()
	return n, err
}

// stop fails the reads under way and those to come, and returns once none
// is under way.
func (s *socketReader) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	s.nc.SetReadDeadline(time.Unix(1, 0))
	for s.active > 0 {
		s.idle.Wait()
	}
}
