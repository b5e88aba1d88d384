package h1client

import (
	"context"
	"time"
)

// conn takes an idle connection to host that is still open, or dials one.
func (t *Transport) conn(ctx context.Context, host string) (*conn, error) {
	for {
		c := t.takeIdle(host)
		if c == nil {
			break
		}
		if time.Since(c.idleSince) <= t.idleTimeout() && c.alive() {
			c.reused, c.got = true, 0
			return c, nil
		}
		c.nc.Close()
	}
	nc, err := t.Dial(ctx, "tcp", host)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, err
	}
	return newConn(t, host, nc), nil
}

func (t *Transport) takeIdle(host string) *conn {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.idle[host]
	if len(cs) == 0 {
		return nil
	}
	c := cs[len(cs)-1]
	cs[len(cs)-1] = nil
	t.idle[host] = cs[:len(cs)-1]
	return c
}

// put keeps c for its host's next request, closing the host's oldest
// connection past MaxIdlePerHost. A timer closes connections idle past
// IdleTimeout while any are kept, traffic or not: a transformer that went
// away leaves its connections half closed until then.
func (t *Transport) put(c *conn) {
	c.idleSince = time.Now()
	var closing []*conn
	t.mu.Lock()
	if t.idle == nil {
		t.idle = map[string][]*conn{}
	}
	cs := append(t.idle[c.host], c)
	if max := t.maxIdlePerHost(); len(cs) > max {
		closing = append(closing, cs[:len(cs)-max]...)
		cs = compact(cs, len(cs)-max)
	}
	t.idle[c.host] = cs
	if t.sweeper == nil {
		t.sweeper = time.AfterFunc(t.idleTimeout(), t.sweep)
	}
	t.mu.Unlock()
	closeAll(closing)
}

// sweep closes the connections idle past IdleTimeout, and comes again
// while any are kept.
func (t *Transport) sweep() {
	t.mu.Lock()
	stale := t.sweepLocked(time.Now())
	t.sweeper = nil
	if len(t.idle) > 0 {
		t.sweeper = time.AfterFunc(t.idleTimeout(), t.sweep)
	}
	t.mu.Unlock()
	closeAll(stale)
}

// sweepLocked removes the connections idle past IdleTimeout and returns
// them. Each host's list runs from the longest idle.
func (t *Transport) sweepLocked(now time.Time) []*conn {
	var stale []*conn
	for host, cs := range t.idle {
		n := 0
		for n < len(cs) && now.Sub(cs[n].idleSince) > t.idleTimeout() {
			n++
		}
		stale = append(stale, cs[:n]...)
		if n == len(cs) {
			delete(t.idle, host)
		} else if n > 0 {
			t.idle[host] = compact(cs, n)
		}
	}
	return stale
}

// compact drops the first n of cs in place, clearing the slots left behind
// so that they keep no closed connection and its buffer alive.
func compact(cs []*conn, n int) []*conn {
	kept := append(cs[:0], cs[n:]...)
	clear(cs[len(kept):])
	return kept
}

func closeAll(cs []*conn) {
	for _, c := range cs {
		c.nc.Close()
	}
}

func (t *Transport) maxIdlePerHost() int {
	if t.MaxIdlePerHost > 0 {
		return t.MaxIdlePerHost
	}
	return 64
}

func (t *Transport) idleTimeout() time.Duration {
	if t.IdleTimeout > 0 {
		return t.IdleTimeout
	}
	return 90 * time.Second
}

func (t *Transport) maxHeaderBytes() int64 {
	if t.MaxHeaderBytes > 0 {
		return t.MaxHeaderBytes
	}
	return 1 << 20
}
