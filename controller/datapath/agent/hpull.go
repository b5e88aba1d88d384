package agent

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// hpull lets the transformer fetch the object: from the agent's raw object
// URL, from the client's ?src= when the Transform's argument is url, as a
// path on the node when it is fqn, or else from an in-flight URL that streams
// the bytes the agent holds. Inline, single-stage GETs are redirected to the
// transformer instead (see redirectURL); this GETs the URL itself.
type hpull struct{ a *Agent }

func (h hpull) transform(ctx context.Context, t Target, in input, exceeded *atomic.Bool) (io.ReadCloser, int64, error) {
	u, err := h.a.pullURL(t, in)
	if err != nil {
		return nil, 0, err
	}
	if u == "" {
		body, size, err := h.a.openBytes(in, exceeded)
		if err != nil {
			return nil, 0, err
		}
		id, remove := h.a.inflight.add(body, size)
		release := func() { body.Close(); remove() }
		u = wire.ObjectURL(t.URL, in.object, wire.Query{Args: in.args, Src: h.a.opts.AdvertiseURL + PathInflight + id})
		// The transformer may still fetch the bytes while it answers:
		// they are released with the result.
		result, n, err := h.a.roundTrip(mustGet(ctx, u))
		if err != nil {
			release()
			return nil, 0, err
		}
		return readCloser{result, closers{result, closerFunc(release)}}, n, nil
	}
	return h.a.roundTrip(mustGet(ctx, u))
}

type closerFunc func()

func (f closerFunc) Close() error { f(); return nil }

// closers closes each of its members in order.
type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// pullURL returns the URL the transformer answers in for an object it can
// fetch by itself, or "" when only the agent holds the bytes.
func (a *Agent) pullURL(t Target, in input) (string, error) {
	q := wire.Query{Args: in.args}
	switch {
	case sendsFQN(t, in):
		if err := a.checkLocal(in.object); err != nil {
			return "", err
		}
		q.FQN = a.root.fqn(in.object)
	case in.local:
		if err := a.checkLocal(in.object); err != nil {
			return "", err
		}
		q.Src = a.opts.AdvertiseURL + PathObjects + wire.ObjectPath(in.object)[1:]
	case in.src != "" && t.Argument == etlv1alpha1.ArgURL:
		q.Src = in.src
	default:
		return "", nil
	}
	return wire.ObjectURL(t.URL, in.object, q), nil
}

// mustGet builds a GET of a URL built by wire.ObjectURL, which always parses.
func mustGet(ctx context.Context, u string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		panic(err)
	}
	return req
}
