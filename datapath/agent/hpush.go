package agent

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

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
	} else if in.local {
		return roundTripHoldingFile(h.a, req, t, body)
	}
	return h.a.roundTrip(req, t)
}

// roundTripHoldingFile sends the object's file as req's body and closes
// the file when the answer is closed, or at once when there is none. The
// transport closes a request body in a goroutine of its own, possibly after
// the answer ended; the agent keeps no file of a namespace open past the
// object.
func roundTripHoldingFile(a *Agent, req *http.Request, t Target, file io.ReadCloser) (io.ReadCloser, int64, error) {
	g := &guardedBody{r: file, c: file}
	req.Body = io.NopCloser(g)
	answer, n, err := a.roundTrip(req, t)
	if err != nil {
		g.Close()
		return nil, 0, err
	}
	return answerClosing{answer, g}, n, nil
}

// answerClosing is a transformer's answer that also closes the request
// body when it is closed.
type answerClosing struct {
	io.ReadCloser
	body io.Closer
}

func (a answerClosing) Close() error {
	err := a.ReadCloser.Close()
	a.body.Close()
	return err
}

// wholeBodySize is the largest body, streamed or stored, that leaves with
// its request's headers in one write: the agent's client to transformers
// (newTransformerTransport) reads such a body straight into the request it
// writes, on the object's own goroutine, and the transformer reads both at
// once. A small object is all in the agent within one round trip of its
// client anyway.
//
// One write also keeps a transformer's answer the cause of its failure: an
// answer sent before the body that passes maxAnswerHeaderBytes is read as
// such, where a body written after it could fail on the closed connection
// and name no cause. A larger stored object can still fail so, as a write
// error.
const wholeBodySize = 32 << 10

func closeBody(b io.Closer) {
	if b != nil {
		b.Close()
	}
}

// roundTrip sends req to t's transformer with t's credential and the time
// left for the object (wire.HeaderObjectTimeout): a 200 is the
// result; any other status is a transformer error whose body is the
// message, kept verbatim.
func (a *Agent) roundTrip(req *http.Request, t Target) (io.ReadCloser, int64, error) {
	if t.Token != "" {
		req.Header.Set(wire.HeaderTransformerToken, t.Token)
	}
	if deadline, ok := req.Context().Deadline(); ok {
		req.Header.Set(wire.HeaderObjectTimeout, wire.FormatObjectTimeout(time.Until(deadline)))
	}
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
	if timedOut(req.Context()) {
		// The transformer gave up when it was told the object's time was
		// up, and its answer may arrive before the agent's own timer has
		// ended ctx: the object timed out, whatever the transformer says.
		return nil, 0, context.DeadlineExceeded
	}
	if len(msg) == 0 {
		msg = []byte(resp.Status)
	}
	return nil, 0, answered{resp.StatusCode, transformerError(string(msg))}
}

// timedOut reports whether ctx's deadline has passed, even if its timer
// has not yet fired.
func timedOut(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || ok && !time.Now().Before(deadline)
}

// maxMessageSize bounds the error message read from a transformer.
const maxMessageSize = 64 << 10

// fqnOf is the path of in's object as an fqn transformer sees it, once the
// object is checked to be a regular file inside its namespace's data.
func fqnOf(in input) (string, error) {
	f, _, err := in.data.Open(in.object)
	if err != nil {
		return "", err
	}
	f.Close()
	return in.data.FQN(in.object), nil
}
