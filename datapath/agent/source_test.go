package agent

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mlkube/mlkube/internal/egress"
	"github.com/mlkube/mlkube/sdk/transformer"
)

// allowLoopbackSrc lets ?src= reach the test sources, which listen on
// 127.0.0.1: the host by name, and loopback explicitly, as an operator would
// allow a network inside the cluster.
func allowLoopbackSrc(t testing.TB) func(*Options) {
	return func(o *Options) {
		p, err := egress.Parse("127.0.0.1", "", "127.0.0.0/8")
		if err != nil {
			t.Fatal(err)
		}
		o.Src = p
	}
}

// source is an http server objects can be fetched from with ?src=.
type source struct {
	srv   *httptest.Server
	blobs sync.Map
	seq   atomic.Int64
}

func newSource(t testing.TB) *source {
	s := &source{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := s.blobs.Load(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data.([]byte))))
		w.Write(data.([]byte))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *source) put(data []byte) string {
	path := "/blob/" + strconv.FormatInt(s.seq.Add(1), 10)
	s.blobs.Store(path, data)
	return s.srv.URL + path
}

// countingEcho echoes and reports how its input arrived: -1 when it was an
// opened file (fqn), else the bytes read from a stream.
func countingEcho(got chan<- int64) transformer.Func {
	return func(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		if _, isFile := in.(*os.File); isFile {
			got <- -1
			return in, nil
		}
		data, err := io.ReadAll(in)
		got <- int64(len(data))
		return bytes.NewReader(data), err
	}
}
