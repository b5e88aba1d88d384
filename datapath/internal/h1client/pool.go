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
		if c.alive() {
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
// connection past MaxIdlePerHost, and now and then every connection idle
// past IdleTimeout.
func (t *Transport) put(c *conn) {
	now := time.Now()
	c.idleSince = now
	var closing []*conn
	t.mu.Lock()
	if t.idle == nil {
		t.idle = map[string][]*conn{}
	}
	cs := append(t.idle[c.host], c)
	if max := t.maxIdlePerHost(); len(cs) > max {
		closing = append(closing, cs[:len(cs)-max]...)
		cs = append(cs[:0], cs[len(cs)-max:]...)
	}
	t.idle[c.host] = cs
	if now.Sub(t.lastSweep) > t.idleTimeout()/2 {
		t.lastSweep = now
		closing = append(closing, t.sweepLocked(now)...)
	}
	t.mu.Unlock()
	for _, c := range closing {
		c.nc.Close()
	}
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
			t.idle[host] = append(cs[:0], cs[n:]...)
		}
	}
	return stale
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
