package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/status"
)

// hpull lets the transformer fetch the object: as a path on the node when
// the Transform's argument is fqn, from the store when a run handed it a
// presigned URL of the object (input.src), or else from an in-flight URL of the
// agent that streams the bytes once, to that transformer (see inflight). The
// agent fetches a ?src= object itself, within its egress policy, rather
// than hand the URL on, and answers the client with the transformer's
// result: transformers take traffic from agents only.
type hpull struct{ a *Agent }

func (h hpull) transform(ctx context.Context, t Target, in input, exceeded *atomic.Bool) (io.ReadCloser, int64, error) {
	if sendsFQN(t, in) {
		fqn, err := fqnOf(in)
		if err != nil {
			return nil, 0, err
		}
		u := wire.ObjectURL(t.URL, in.object, wire.Query{Args: in.args, FQN: fqn})
		return h.a.roundTrip(mustGet(ctx, u), t)
	}
	if in.src != "" {
		u := wire.ObjectURL(t.URL, in.object, wire.Query{Args: in.args, Src: in.src})
		result, n, err := h.a.roundTrip(mustGet(ctx, u), t)
		// A transport's error quotes the request's URL, and so the src's
		// signature.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			ue.URL = wire.RedactPresigned(ue.URL)
		}
		// The SDK answers its fetch's 404 as its own: the store has no such
		// object (a run's listed or templated name), which a relayed
		// object's GET says as a 404 too.
		if a, ok := errors.AsType[answered](err); ok && a.code == http.StatusNotFound {
			err = status.NotFound(fmt.Errorf("object %q: it does not exist in the store (the transformer's fetch of it: %w)", in.object, a.err))
		}
		return result, n, err
	}
	body, size, err := h.a.openBytes(in, exceeded)
	if err != nil {
		return nil, 0, err
	}
	id, ctx, remove := h.a.inflight.add(ctx, body, size, t)
	release := func() { body.Close(); remove() }
	u := wire.ObjectURL(t.URL, in.object, wire.Query{Args: in.args, Src: h.a.opts.AdvertiseURL + wire.PathInflight + id})
	// The transformer may still fetch the bytes while it answers: they are
	// released with the result.
	result, n, err := h.a.roundTrip(mustGet(ctx, u), t)
	if err != nil {
		err = failure(ctx, err)
		release()
		return nil, 0, err
	}
	return readCloser{result, closers{result, closerFunc(release)}}, n, nil
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

// mustGet builds a GET of a URL built by wire.ObjectURL, which always parses.
func mustGet(ctx context.Context, u string) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		panic(err)
	}
	return req
}
