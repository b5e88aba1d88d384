package agent

import (
	"context"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/panics"
)

// wsPool holds the connections to one transformer. An object goes to the
// connection with the fewest objects in flight; a new connection is dialled
// while every one is busy and the pool is below its size, and broken ones
// are dropped.
type wsPool struct {
	url, token   string
	size         int
	writeTimeout time.Duration
	panics       *panics.Reporter

	mu    sync.Mutex
	conns []*wsConn
	// used: a connection was dialled; gone: the pool was forgotten, and
	// a caller holding it must look the URL up again.
	used, gone bool
}

// get returns a connection for one object, avoiding those in avoid: a
// pipeline that runs through the same transformer twice must not wait on a
// connection that carries its own earlier stage.
func (p *wsPool) get(ctx context.Context, avoid []*wsConn) (c *wsConn, gone bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone {
		return nil, true, nil
	}
	p.conns = slices.DeleteFunc(p.conns, (*wsConn).broken)
	var best *wsConn
	for _, c := range p.conns {
		if slices.Contains(avoid, c) {
			continue
		}
		if best == nil || c.inflight.Load() < best.inflight.Load() {
			best = c
		}
	}
	if best != nil && (best.inflight.Load() == 0 || len(p.conns) >= p.size) {
		return best, false, nil
	}
	// Dialling under the lock keeps the pool at its size; on a node-local
	// connection it takes a round trip.
	p.used = true
	if c, err = dialWS(ctx, p.url, p.token, p.writeTimeout, p.panics); err != nil {
		return nil, false, err
	}
	p.conns = append(p.conns, c)
	return c, false, nil
}

// forget marks the pool gone if every connection it dialled has broken:
// its transformer has most likely gone with its pod.
func (p *wsPool) forget() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = slices.DeleteFunc(p.conns, (*wsConn).broken)
	p.gone = p.gone || (p.used && len(p.conns) == 0)
	return p.gone
}

func (p *wsPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.fail(errConnClosed)
	}
	p.conns = nil
}

// wsPools holds one pool per transformer URL and credential: connections are
// authenticated once, at the upgrade, so a Transform whose status names
// another Transform's transformer must not share that one's connections.
type wsPools struct {
	size         int
	writeTimeout time.Duration
	panics       *panics.Reporter
	pools        sync.Map // poolKey → *wsPool
}

type poolKey struct{ url, token string }

// get returns a connection to t's transformer for one object.
func (ps *wsPools) get(ctx context.Context, t Target, avoid []*wsConn) (*wsConn, error) {
	for {
		c, gone, err := ps.pool(poolKey{t.URL, t.Token}).get(ctx, avoid)
		if !gone {
			return c, err
		}
	}
}

func (ps *wsPools) pool(key poolKey) *wsPool {
	if p, ok := ps.pools.Load(key); ok {
		return p.(*wsPool)
	}
	// A transformer not seen before, often one that replaced another:
	// forget the pools whose connections have all broken.
	ps.pools.Range(func(k, p any) bool {
		if p.(*wsPool).forget() {
			ps.pools.CompareAndDelete(k, p)
		}
		return true
	})
	p, _ := ps.pools.LoadOrStore(key, &wsPool{url: key.url, token: key.token, size: ps.size, writeTimeout: ps.writeTimeout, panics: ps.panics})
	return p.(*wsPool)
}

func (ps *wsPools) close() {
	ps.pools.Range(func(_, p any) bool {
		p.(*wsPool).close()
		return true
	})
}

// wsComm sends objects over the ws pools.
type wsComm struct{ a *Agent }

func (w wsComm) transform(ctx context.Context, t Target, in input, exceeded *atomic.Bool) (io.ReadCloser, int64, error) {
	ctrl := wire.Control{Object: in.object, Args: in.args}
	var body io.ReadCloser
	if sendsFQN(t, in) {
		var err error
		if ctrl.FQN, err = fqnOf(in); err != nil {
			return nil, 0, err
		}
	} else {
		var err error
		if body, _, err = w.a.openBytes(in, exceeded); err != nil {
			return nil, 0, err
		}
	}
	conn, err := w.a.ws.get(ctx, t, *in.wsConns)
	if err != nil {
		closeBody(body)
		return nil, 0, err
	}
	var r io.Reader
	if body != nil {
		r = body
	}
	res, err := conn.do(ctx, ctrl, r)
	if err != nil {
		closeBody(body)
		return nil, 0, err
	}
	*in.wsConns = append(*in.wsConns, conn)
	if body == nil {
		return res, -1, nil
	}
	return readCloser{res, closers{res, body}}, -1, nil
}
