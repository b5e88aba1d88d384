package agent

import (
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/mlkube/mlkube/internal/bufpool"
)

// PathInflight serves the bytes of objects in flight to hpull transformers:
// a request body, a file of the data root, a ?src= object or the result of
// an earlier pipeline stage. Each is a capability: served once, under an
// unguessable id, to the transformer it was issued to (by the address the
// request comes from) and to no other caller.
const PathInflight = "/v1/inflight/"

// inflight is the registry behind PathInflight.
type inflight struct {
	mu      sync.Mutex
	streams map[string]*inflightStream
}

type inflightStream struct {
	body io.Reader
	size int64
	// peer is the host the transformer calls from.
	peer string
	// done is closed when a GET that took the body has finished with it.
	done chan struct{}
}

// add registers body for the transformer at host peer and returns its id
// and a function that unregisters it and waits until no GET reads body any
// more; the caller closes body first so that a GET still reading it stops.
func (f *inflight) add(body io.Reader, size int64, peer string) (string, func()) {
	id := rand.Text()
	s := &inflightStream{body: body, size: size, peer: peer, done: make(chan struct{})}
	f.mu.Lock()
	if f.streams == nil {
		f.streams = make(map[string]*inflightStream)
	}
	f.streams[id] = s
	f.mu.Unlock()
	return id, func() {
		if f.take(id) == nil { // taken by a GET
			<-s.done
		}
	}
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

// serve answers GET PathInflight<id> with the stream's bytes, once, to the
// transformer it was issued to.
func (f *inflight) serve(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	// 404 for another caller too: the id is not even confirmed to exist.
	s := f.takeFor(strings.TrimPrefix(r.URL.Path, PathInflight), host)
	if s == nil {
		http.Error(w, "no such object in flight for this caller", http.StatusNotFound)
		return
	}
	defer close(s.done)
	if s.size >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(s.size, 10))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	buf := bufpool.Objects.Get()
	defer bufpool.Objects.Put(buf)
	if srcErr, _ := bufpool.Copy(w, s.body, *buf); srcErr != nil {
		// Breaks the response, so the transformer sees a failed fetch
		// rather than a short object.
		panic(http.ErrAbortHandler)
	}
}
