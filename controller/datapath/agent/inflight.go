package agent

import (
	"crypto/rand"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mlkube/mlkube/internal/bufpool"
)

// PathInflight serves the bytes of objects in flight to hpull transformers:
// a request body or the result of an earlier pipeline stage, which have no
// URL of their own. Each is served once, under an unguessable id.
const PathInflight = "/v1/inflight/"

// inflight is the registry behind PathInflight.
type inflight struct {
	mu      sync.Mutex
	streams map[string]*inflightStream
}

type inflightStream struct {
	body io.Reader
	size int64
	// done is closed when a GET that took the body has finished with it.
	done chan struct{}
}

// add registers body and returns its id and a function that unregisters it
// and waits until no GET reads body any more; the caller closes body first
// so that a GET still reading it stops.
func (f *inflight) add(body io.Reader, size int64) (string, func()) {
	id := rand.Text()
	s := &inflightStream{body: body, size: size, done: make(chan struct{})}
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

// serve answers GET PathInflight<id> with the stream's bytes, once.
func (f *inflight) serve(w http.ResponseWriter, r *http.Request) {
	s := f.take(strings.TrimPrefix(r.URL.Path, PathInflight))
	if s == nil {
		http.Error(w, "no such object in flight", http.StatusNotFound)
		return
	}
	defer close(s.done)
	if s.size >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(s.size, 10))
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	buf := getBuffer()
	defer putBuffer(buf)
	if srcErr, _ := bufpool.Copy(w, s.body, *buf); srcErr != nil {
		// Breaks the response, so the transformer sees a failed fetch
		// rather than a short object.
		panic(http.ErrAbortHandler)
	}
}
