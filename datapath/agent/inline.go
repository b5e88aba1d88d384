package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/dataroot"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/status"
)

// serveTransform answers the inline API: PUT or GET
// /v1/transform/{namespace}/{name}/{object...}.
func (a *Agent) serveTransform(w http.ResponseWriter, r *http.Request) {
	p, err := parseTransformPath(r.URL.EscapedPath())
	if err != nil {
		a.fail(w, p, status.BadRequest(err))
		return
	}
	if r.Method != http.MethodPut && r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET, PUT")
		a.fail(w, p, status.With(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", r.Method)))
		return
	}
	q := wire.ParseQuery(r.URL.Query())
	// Before the Transforms are looked up: a caller learns nothing of
	// another namespace, not even what exists there.
	reqs := useTransforms(p)
	if r.Method == http.MethodGet && q.Src == "" {
		reqs = append(reqs, dataAccess(readData, p.namespace))
	}
	if !a.authorized(w, r, p, reqs...) {
		return
	}
	targets, err := a.resolve(r.Context(), p)
	if err != nil {
		a.fail(w, p, err)
		return
	}
	if err := checkArgs(q.Args); err != nil {
		a.fail(w, p, err)
		return
	}
	// Until its answer ends, each holds goroutines, buffers and a
	// transformer's connection.
	if err := a.limits.inline.Admit(p.namespace, 1); err != nil {
		a.fail(w, p, err)
		return
	}
	defer a.limits.inline.Release(p.namespace, 1)
	o := &objectRun{a: a, object: p.object, start: time.Now()}
	ctx, cancel := context.WithTimeout(r.Context(), objectTimeoutOf(targets))
	defer cancel()
	in, body, err := a.requestInput(ctx, r, p, q, &o.exceeded)
	if err != nil {
		o.stages = append(o.stages, stageRun{t: targets[0]})
	} else {
		if body != nil {
			// Whatever still reads the body (a transport sending it
			// to a transformer) must stop before the handler returns.
			defer body.Close()
		}
		if r.Method == http.MethodPut {
			// The result streams back while the body still streams in.
			// By default Go's HTTP/1 server closes the rest of the body
			// when the answer starts, and the transformer would get a
			// truncated object.
			_ = http.NewResponseController(w).EnableFullDuplex()
		}
		o.inSize = in.size
		err = a.transformAnswer(ctx, w, o, targets, in)
	}
	if err != nil {
		err = o.classify(err)
		o.finish(statusOf(err), status.Message(err))
		if body != nil && r.Method == http.MethodPut && !drained(body, errorDrainLimit) {
			// With full duplex, net/http would close the connection
			// without saying so.
			w.Header().Set("Connection", "close")
		}
		a.fail(w, p, err)
		return
	}
	o.finish(0, "")
}

// errorDrainLimit is how much of an unread body a failed object reads to
// keep the connection, as much as net/http itself discards.
const errorDrainLimit = 256 << 10

// drained reads r to its end if at most limit bytes remain, and reports
// whether it got there.
func drained(r io.Reader, limit int64) bool {
	_, err := io.CopyN(io.Discard, r, limit+1)
	return errors.Is(err, io.EOF)
}

// transformAnswer runs the pipeline and streams its result to the client.
// An error it returns has not been answered yet; a result that fails after
// its answer started breaks the response instead.
func (a *Agent) transformAnswer(ctx context.Context, w http.ResponseWriter, o *objectRun, targets []Target, in input) error {
	result, size, err := o.run(ctx, targets, in)
	if err != nil {
		return err
	}
	defer result.Close()
	buf := bufpool.Objects.Get()
	defer bufpool.Objects.Put(buf)
	n, complete, err := bufpool.Prefetch(result, *buf)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	switch {
	case complete:
		h.Set("Content-Length", strconv.Itoa(n))
	case size >= 0:
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	if _, err := w.Write((*buf)[:n]); err != nil || complete {
		return nil // a client that went away is not the object's failure
	}
	if srcErr, _ := bufpool.CopyStream(w, result); srcErr != nil {
		srcErr = o.classify(srcErr)
		o.finish(statusOf(srcErr), "result failed after its answer started: "+status.Message(srcErr))
		a.log.Warn("result failed after its answer started; aborting the response", "object", o.object, "error", srcErr)
		result.Close()
		// Breaks the response, so the client sees an error rather than
		// a short result with status 200.
		panic(http.ErrAbortHandler)
	}
	return nil
}

// resolve finds the Target of every stage of the pipeline.
func (a *Agent) resolve(ctx context.Context, p transformPath) ([]Target, error) {
	targets := make([]Target, len(p.pipeline))
	for i, name := range p.pipeline {
		t, err := a.resolver.Lookup(ctx, p.namespace, name)
		if err != nil {
			if errors.Is(err, ErrUnknownTransform) {
				err = status.NotFound(fmt.Errorf("transform %s/%s not found", p.namespace, name))
			}
			return nil, err
		}
		targets[i] = t
	}
	return targets, nil
}

// objectTimeoutOf is a pipeline's time for one object: each Transform
// brings its own objectTimeout.
func objectTimeoutOf(targets []Target) time.Duration {
	var d time.Duration
	for _, t := range targets {
		d += t.ObjectTimeout
	}
	return d
}

// requestInput returns the object a request names: its body (PUT), the
// body of ?src= or a file under the data root (GET). A streamed body comes
// back guarded too; closing the guard ends every read of it.
func (a *Agent) requestInput(ctx context.Context, r *http.Request, p transformPath, q wire.Query, exceeded *atomic.Bool) (input, *guardedBody, error) {
	in := input{object: p.object, args: q.Args, size: -1}
	var body io.ReadCloser
	switch {
	case r.Method == http.MethodPut:
		body, in.size = r.Body, r.ContentLength
	case q.Src != "":
		if err := a.checkSrc(q.Src); err != nil {
			return in, nil, err
		}
		var err error
		if body, in.size, err = a.fetch(ctx, q.Src); err != nil {
			return in, nil, err
		}
	default:
		in, err := a.localInput(a.data(p.namespace), p.object, q.Args)
		return in, nil, err
	}
	g, err := a.bodyInput(&in, body, exceeded)
	return in, g, err
}

// bodyInput makes body, of in.size bytes (-1: unknown), in's bytes, held to the agent's object
// size limit (413 past it, remembered in exceeded when set) and guarded: closing the guard ends
// every read of it. A body known to be too large is closed and refused at once.
func (a *Agent) bodyInput(in *input, body io.ReadCloser, exceeded *atomic.Bool) (*guardedBody, error) {
	if a.size.over(in.size) {
		body.Close()
		return nil, a.size.err
	}
	g := &guardedBody{r: a.size.wrap(body, exceeded), c: body}
	in.body = g
	return g, nil
}

// localInput is object, a file of data, as a pipeline's input.
func (a *Agent) localInput(data *dataroot.Namespace, object, args string) (input, error) {
	in := input{object: object, args: args, local: true, data: data}
	f, size, err := data.Open(object)
	if err != nil {
		return in, err
	}
	f.Close()
	if a.size.over(size) {
		return in, a.size.err
	}
	in.size = size
	return in, nil
}

// data is namespace ns's part of the data root.
func (a *Agent) data(ns string) *dataroot.Namespace {
	return dataroot.Of(a.root, ns, a.opts.TransformerDataRoot)
}

// fail answers err as JSON.
func (a *Agent) fail(w http.ResponseWriter, p transformPath, err error) {
	writeError(w, statusOf(err), Error{Error: status.Message(err), Transform: p.namespaceName(), Object: p.object, Node: a.opts.Node})
}
