package agent

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/mlkube/mlkube/api/wire"
)

// hpush PUTs the object to the transformer and streams the answer back; it
// also serves io, whose shim speaks the same contract.
type hpush struct{ a *Agent }

func (h hpush) transform(ctx context.Context, t Target, in input, exceeded *atomic.Bool) (io.ReadCloser, int64, error) {
	q := wire.Query{Args: in.args}
	var body io.ReadCloser
	size := int64(0)
	if sendsFQN(t, in) {
		var err error
		if q.FQN, err = fqnOf(in); err != nil {
			return nil, 0, err
		}
	} else {
		var err error
		if body, size, err = h.a.openBytes(in, exceeded); err != nil {
			return nil, 0, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, wire.ObjectURL(t.URL, in.object, q), body)
	if err != nil {
		closeBody(body)
		return nil, 0, err
	}
	req.ContentLength = size
	if body == nil || size == 0 {
		closeBody(body)
		req.Body, req.ContentLength = http.NoBody, 0
	}
	return h.a.roundTrip(req)
}

func closeBody(b io.Closer) {
	if b != nil {
		b.Close()
	}
}

// roundTrip sends req to a transformer: a 200 is the result; any other
// status is a transformer error whose body is the message, kept verbatim.
func (a *Agent) roundTrip(req *http.Request) (io.ReadCloser, int64, error) {
	resp, err := a.transformers.Do(req)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, resp.ContentLength, nil
	}
	defer resp.Body.Close()
	msg, err := io.ReadAll(io.LimitReader(resp.Body, maxMessageSize))
	if err != nil && req.Context().Err() != nil {
		return nil, 0, req.Context().Err()
	}
	if len(msg) == 0 {
		msg = []byte(resp.Status)
	}
	return nil, 0, transformerError(string(msg))
}

// maxMessageSize bounds the error message read from a transformer.
const maxMessageSize = 64 << 10

// fqnOf is the path of in's object as an fqn transformer sees it, once the
// object is checked to be a regular file inside its namespace's data.
func fqnOf(in input) (string, error) {
	f, _, err := in.data.open(in.object)
	if err != nil {
		return "", err
	}
	f.Close()
	return in.data.fqn(in.object), nil
}
