package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/status"
	"github.com/mlkube/mlkube/internal/ws"
)

// PathStream is the streaming form of the inline API, for ws Transforms:
// GET /v1/stream/{namespace}/{name} upgrades to a WebSocket that speaks the
// ws wire contract towards the client (per object a wire.Control, then one
// binary message; answers in order, a binary result or a text
// wire.ErrorMessage). A client keeps many objects in flight on it, and the
// agent pipelines them over its pooled transformer connections, so small
// objects pay no per-object HTTP exchange on either hop: AIStore's fastest
// mode, a persistent stream. fqn is not offered: objects carry their bytes.
const PathStream = wire.PathStream

// streamObject is one object of a stream, sent to the transformer (or
// failed before), waiting for its answer.
type streamObject struct {
	object  string
	pending *wsPending
	err     error
	cancel  context.CancelFunc
	in      *countingReader
	start   time.Time
	// exceeded says the body went over the size limit.
	exceeded *atomic.Bool
}

func (a *Agent) serveStream(w http.ResponseWriter, r *http.Request) {
	ns, name, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), PathStream), "/")
	p, err := parsePipeline(ns, name)
	if err == nil && len(p.pipeline) > 1 {
		err = fmt.Errorf("streams run one Transform; %q is a pipeline", name)
	}
	if err != nil {
		a.fail(w, transformPath{}, status.BadRequest(fmt.Errorf("want %s{namespace}/{name}: %w", PathStream, err)))
		return
	}
	caller, ok := a.authorizedCaller(w, r, p, useTransforms(p)...)
	if !ok {
		return
	}
	auth := &streamAuth{access: a.opts.Access, caller: caller, path: p, every: a.opts.StreamReauthorize,
		next: time.Now().Add(a.opts.StreamReauthorize)}
	targets, err := a.resolve(r.Context(), p)
	if err != nil {
		a.fail(w, p, err)
		return
	}
	t := targets[0]
	if t.Communication != etlv1alpha1.CommWS {
		a.fail(w, p, status.BadRequest(fmt.Errorf("streams need a ws transform; %s uses %s", t.Key(), t.Communication)))
		return
	}
	if err := a.limits.streams.Admit(p.namespace, 1); err != nil {
		a.fail(w, p, err)
		return
	}
	defer a.limits.streams.Release(p.namespace, 1)
	conn, err := ws.Accept(w, r)
	if err != nil {
		return // Accept has answered
	}
	defer conn.CloseNow()
	conn.SetWriteTimeout(a.opts.WriteTimeout)
	idle := a.watchIdle(conn)
	defer idle.stop()
	a.pingStream(conn)
	objs := make(chan streamObject, maxInflightPerConn)
	a.panics.GoSafe("stream reader", func() { a.readStream(conn, t, objs, idle, auth) })
	a.answerStream(conn, t, objs, idle)
	// The reader has closed objs, so auth is its to read now.
	if auth.refused != "" {
		// The objects that came before were allowed, and are answered.
		conn.Close(ws.StatusPolicyViolation, auth.refused)
	}
}

// readStream reads the client's objects and starts each on a transformer
// connection as soon as it arrives. It stops when auth finds the caller no
// longer allowed, with auth.refused saying why.
func (a *Agent) readStream(conn *ws.Conn, t Target, objs chan<- streamObject, idle *streamIdle, auth *streamAuth) {
	defer close(objs)
	for {
		typ, r, err := conn.NextReader()
		if err != nil {
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, wire.MaxControlSize+1))
		if err != nil || typ != ws.Text || len(data) > wire.MaxControlSize {
			conn.Close(ws.StatusPolicyViolation, "expected a control message")
			return
		}
		ctrl, err := wire.ParseControl(data)
		if err != nil {
			conn.Close(ws.StatusPolicyViolation, "bad control message")
			return
		}
		// Every object that starts here is answered or released once.
		idle.begin()
		if ctrl.FQN != "" {
			objs <- streamObject{object: ctrl.Object, err: status.BadRequest(errors.New("streams carry bytes, not fqn")), start: time.Now()}
			continue
		}
		typ, body, err := conn.NextReader()
		if err != nil {
			idle.end()
			return
		}
		if typ != ws.Binary {
			idle.end()
			conn.Close(ws.StatusPolicyViolation, "expected a binary data message")
			return
		}
		var o streamObject
		switch err := auth.check(context.Background()); {
		case err != nil && withdrawn(err):
			idle.end()
			auth.refused = auth.reason()
			return
		case err != nil:
			o = streamObject{object: ctrl.Object, err: reauthFailure(err), start: time.Now()}
		default:
			o = a.startStreamObject(t, ctrl, body)
		}
		// Handed over before the body is sent: the answer may have to be
		// read before the transformer reads the rest of the body.
		objs <- o
		if o.pending != nil {
			<-o.pending.res.sent
		}
		// The next message can be read once this one is consumed: the
		// body has been sent, or failed and is skipped here.
		if _, err := io.Copy(io.Discard, body); err != nil {
			return
		}
	}
}

func (a *Agent) startStreamObject(t Target, ctrl wire.Control, body io.Reader) streamObject {
	o := streamObject{object: ctrl.Object, start: time.Now(), in: &countingReader{r: body}, exceeded: new(atomic.Bool)}
	if o.err = wire.CheckObject(ctrl.Object); o.err != nil {
		o.err = status.BadRequest(o.err)
		return o
	}
	if o.err = checkArgs(ctrl.Args); o.err != nil {
		return o
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.ObjectTimeout)
	o.cancel = cancel
	tc, err := a.ws.get(ctx, t, nil)
	if err == nil {
		o.pending, err = tc.start(ctx, wire.Control{Object: ctrl.Object, Args: ctrl.Args}, a.size.wrap(o.in, o.exceeded))
	}
	o.err = err
	return o
}

// answerStream writes the answers in the order the objects came.
func (a *Agent) answerStream(conn *ws.Conn, t Target, objs <-chan streamObject, idle *streamIdle) {
	defer func() {
		// The client is gone: release what is still in flight.
		for o := range objs {
			o.release()
			idle.end()
		}
	}()
	buf := bufpool.Objects.Get()
	defer bufpool.Objects.Put(buf)
	for o := range objs {
		err := a.answerStreamObject(conn, t, o, *buf)
		idle.end()
		if err != nil {
			return
		}
	}
}

// answerStreamObject answers one object; an error it returns ends the
// stream.
func (a *Agent) answerStreamObject(conn *ws.Conn, t Target, o streamObject, buf []byte) error {
	if o.cancel != nil {
		defer o.cancel()
	}
	var res io.ReadCloser
	err := o.err
	if err == nil {
		res, err = o.pending.wait()
	}
	if err != nil && o.exceeded != nil && o.exceeded.Load() { // nil for an object refused before its body
		err = a.size.err
	}
	if err != nil {
		return a.answerStreamError(conn, t, o, 0, err)
	}
	defer res.Close()
	out := &countingReader{r: res}
	conn.LockWrite()
	started, srcErr, dstErr := conn.WriteFrom(ws.Binary, out, buf)
	conn.UnlockWrite()
	switch {
	case dstErr != nil:
		return dstErr
	case srcErr != nil && !started:
		return a.answerStreamError(conn, t, o, out.n.Load(), srcErr)
	case srcErr != nil:
		a.recordStream(t, o, out.n.Load(), statusOf(srcErr), status.Message(srcErr))
		conn.Close(ws.StatusInternalError, "transformation failed mid-answer")
		return srcErr
	}
	a.recordStream(t, o, out.n.Load(), 0, "")
	return nil
}

// answerStreamError answers a failed object with an error message.
func (a *Agent) answerStreamError(conn *ws.Conn, t Target, o streamObject, bytesOut int64, err error) error {
	a.recordStream(t, o, bytesOut, statusOf(err), status.Message(err))
	return conn.Send(ws.Text, wire.MarshalError(status.Message(err)))
}

// release gives up an object that will not be answered.
func (o streamObject) release() {
	if o.pending != nil && o.err == nil {
		if res, err := o.pending.wait(); err == nil {
			res.Close()
		}
	}
	if o.cancel != nil {
		o.cancel()
	}
}

func (a *Agent) recordStream(t Target, o streamObject, bytesOut int64, code int, msg string) {
	var bytesIn int64
	if o.in != nil {
		bytesIn = o.in.n.Load()
	}
	a.stats.observe(t.Key(), bytesIn, bytesOut, o.object, code, msg, o.start)
	a.metrics.observe(t.Key(), string(t.Communication), bytesIn, bytesOut, time.Since(o.start), code)
}
