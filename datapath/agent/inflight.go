package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/bufpool"
)

// inflight is the registry behind wire.PathInflight: it serves the bytes of
// objects in flight to hpull transformers (a request body, a file of the data
// root, a ?src= object or the result of an earlier pipeline stage). Each is a
// capability: served once, under an unguessable id, to the transformer it was
// issued to (by the address the request comes from) and to no other caller.
type inflight struct {
	mu      sync.Mutex
	streams map[string]*inflightStream
	// writeTimeout bounds each write of a GET (Options.WriteTimeout): a
	// transformer that stops reading its object is cut, and the object
	// fails (notReadError). It also bounds release's wait for a cut GET.
	writeTimeout time.Duration
}

type inflightStream struct {
	body io.Reader
	size int64
	// peer is the host the transformer calls from; transform is the
	// Transform's key, for the error of a transformer that stops reading.
	peer, transform string
	// fail ends the object's request to the transformer, with its cause.
	fail context.CancelCauseFunc
	// done is closed when a GET that took the body has finished with it.
	done chan struct{}

	mu sync.Mutex
	// answer is the answer of the GET that took the stream; over says the
	// object no longer waits for its bytes.
	answer *deadlineWriter
	over   bool
}

// add registers body, the object of t, for t's transformer. It returns the
// stream's id, the context of the object's request to the transformer, and
// release, which unregisters the stream. A GET of it lasts no longer than
// that context, which ends with ctx, with release, or when the transformer
// stops reading (its cause a notReadError).
//
// release cuts a GET still going on and waits until it lets go of body, at
// most writeTimeout: a cut GET stops at its next write, but may first sit in
// a read of body that closing does not stop (a client's request body). It
// then ends by itself and reads nothing the caller frees. The caller closes
// body first, so that a GET reading a file stops.
func (f *inflight) add(ctx context.Context, body io.Reader, size int64, t Target) (id string, _ context.Context, release func()) {
	ctx, fail := context.WithCancelCause(ctx)
	s := &inflightStream{body: body, size: size, peer: peerOf(t.URL), transform: t.Key(), fail: fail, done: make(chan struct{})}
	id = rand.Text()
	f.mu.Lock()
	if f.streams == nil {
		f.streams = make(map[string]*inflightStream)
	}
	f.streams[id] = s
	f.mu.Unlock()
	stopCut := context.AfterFunc(ctx, s.cut)
	return id, ctx, func() {
		// Cut here rather than by AfterFunc, which fail(nil) would run
		// in a goroutine of its own for every object.
		stopCut()
		if f.take(id) == nil { // taken by a GET
			s.cut()
			f.await(s)
		}
		fail(nil)
	}
}

// await waits until the GET that took s has finished, at most writeTimeout.
func (f *inflight) await(s *inflightStream) {
	t := time.NewTimer(f.writeTimeout)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
	}
}

// cut stops the GET of s, now or as soon as it starts answering.
func (s *inflightStream) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.over = true
	if s.answer != nil {
		s.answer.stop()
	}
}

// attach makes w the answer of the GET that took s; false when the object
// no longer waits for its bytes.
func (s *inflightStream) attach(w *deadlineWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = w
	return !s.over
}

// take removes and returns the stream id.
func (f *inflight) take(id string) *inflightStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.streams[id]
	delete(f.streams, id)
	return s
}

// takeFor removes and returns the stream id if it was issued to peer. A
// stream asked for by another caller stays.
func (f *inflight) takeFor(id, peer string) *inflightStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.streams[id]
	if s == nil || s.peer != peer {
		return nil
	}
	delete(f.streams, id)
	return s
}

// peerOf is the host of a transformer's URL, where its fetches come from.
func peerOf(transformerURL string) string {
	u, err := url.Parse(transformerURL)
	if err != nil {
		return "\x00" // matches no caller
	}
	return u.Hostname()
}

// serve answers GET wire.PathInflight<id> with the stream's bytes, once, to the
// transformer it was issued to, each write within writeTimeout.
func (f *inflight) serve(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	// 404 for another caller too: the id is not even confirmed to exist.
	s := f.takeFor(strings.TrimPrefix(r.URL.Path, wire.PathInflight), host)
	if s == nil {
		http.Error(w, "no such object in flight for this caller", http.StatusNotFound)
		return
	}
	defer close(s.done)
	if err := f.send(w, s); err != nil {
		// Breaks the response, so the transformer sees a failed fetch
		// rather than a short object.
		panic(http.ErrAbortHandler)
	}
}

// send answers with the bytes of s, each write within writeTimeout: a
// transformer that stops reading them fails its object.
func (f *inflight) send(w http.ResponseWriter, s *inflightStream) error {
	answer := newDeadlineWriter(w, f.writeTimeout)
	if !s.attach(answer) {
		return errAnswerCut
	}
	if s.size >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(s.size, 10))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	buf := bufpool.Objects.Get()
	defer bufpool.Objects.Put(buf)
	srcErr, dstErr := bufpool.Copy(answer, s.body, *buf)
	if srcErr != nil {
		return srcErr
	}
	if dstErr == nil {
		dstErr = answer.end()
	}
	if errors.Is(dstErr, os.ErrDeadlineExceeded) && !answer.stopped() {
		s.fail(&notReadError{transform: s.transform, timeout: f.writeTimeout})
	}
	return dstErr
}

// notReadError fails an object whose transformer stopped reading it.
type notReadError struct {
	transform string
	timeout   time.Duration
}

func (e *notReadError) Error() string {
	return fmt.Sprintf("transform %s: the transformer did not read its object within %s (the agent's --write-timeout); its fetch was cut",
		e.transform, e.timeout)
}

// failure is the error of an object whose request to its transformer
// failed with err: the transformer's stall when that ended ctx, the
// context add returned, rather than the transport's report of a cancelled
// request (which names the in-flight URL).
func failure(ctx context.Context, err error) error {
	if nr, ok := errors.AsType[*notReadError](context.Cause(ctx)); ok {
		return nr
	}
	return err
}
