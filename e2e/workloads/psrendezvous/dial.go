package psrendezvous

import (
	"context"
	"fmt"
	"log"
	"net"
	"time"
)

// DialFunc opens a connection; (*net.Dialer).DialContext is the production one.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Backoff between dial attempts: the first retries are quick because a Service
// usually resolves within a second of the pod starting; the cap keeps a long wait
// from flooding the log or the DNS server.
const (
	firstBackoff = 100 * time.Millisecond
	maxBackoff   = 2 * time.Second
)

// dialRetry dials addr until it answers or ctx ends. Peers start in any order, so a
// refused connection or an unknown DNS name is expected for a while; it logs the
// first failure and the eventual success, not every attempt.
func dialRetry(ctx context.Context, dial DialFunc, addr string, logger *log.Logger) (net.Conn, error) {
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		c, err := dial(ctx, "tcp", addr)
		if err == nil {
			if attempt > 1 {
				logger.Printf("reached %s after %d attempts", addr, attempt)
			}
			return c, nil
		}
		if attempt == 1 {
			logger.Printf("%s not reachable yet (%v); retrying until the deadline", addr, err)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("dialing %s: %w (last error: %w)", addr, context.Cause(ctx), err)
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}
