package transformer

import (
	"context"
	"sync"
)

// sessions tracks the WebSocket sessions, which http.Server.Shutdown does not
// see because their connections are hijacked.
type sessions struct {
	mu       sync.Mutex
	draining bool
	wg       sync.WaitGroup
	// drain is closed when shutdown starts: sessions end after the object
	// they are answering.
	drain chan struct{}
	// ctx ends every session at once when the graceful period is over.
	ctx  context.Context
	kill context.CancelFunc
}

func (s *sessions) init() {
	s.drain = make(chan struct{})
	s.ctx, s.kill = context.WithCancel(context.Background())
}

// add registers a new session; it reports false once shutdown has started.
func (s *sessions) add() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false
	}
	s.wg.Add(1)
	return true
}

func (s *sessions) done() { s.wg.Done() }

// shutdown drains the sessions and waits for them; when ctx ends first it
// closes them at once, waits for them to go, and returns ctx's error.
func (s *sessions) shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.draining {
		s.draining = true
		close(s.drain)
	}
	s.mu.Unlock()

	gone := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(gone)
	}()
	select {
	case <-gone:
		return nil
	case <-ctx.Done():
		s.kill()
		<-gone
		return ctx.Err()
	}
}
