package transformertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer"
)

// Mechanism is one way an object reaches a transformer.
type Mechanism string

// The mechanisms of the wire contract; the FQN variants pass a file under the
// server's FQNRoot instead of the bytes.
const (
	HPush    Mechanism = "hpush"
	HPushFQN Mechanism = "hpush-fqn"
	HPull    Mechanism = "hpull"
	HPullFQN Mechanism = "hpull-fqn"
	WS       Mechanism = "ws"
	WSFQN    Mechanism = "ws-fqn"
)

// Mechanisms lists every Mechanism.
var Mechanisms = []Mechanism{HPush, HPushFQN, HPull, HPullFQN, WS, WSFQN}

// Server is a transformer served on loopback, with an fqn root and a source
// server for hpull. It is closed when the test ends.
type Server struct {
	// URL is the transformer's base URL, "http://127.0.0.1:port".
	URL string
	// FQNRoot is the directory fqn paths may name.
	FQNRoot string
	// Handler is the transformer.
	Handler *transformer.Handler
	// Client is the HTTP client the mechanisms use. It sends Token on every
	// request, as the node agent does.
	Client *http.Client
	// Token is the node agent's credential the transformer expects
	// (wire.HeaderTransformerToken): a random one per server.
	Token string

	src   *httptest.Server
	blobs sync.Map // src path → []byte
	seq   atomic.Int64

	wsMu sync.Mutex
	ws   *WSClient
}

// NewServer serves fn on loopback. opts come after the server's own
// transformer.WithFQNRoot, WithToken (a random Token) and WithLogger (to the
// test's output), and may override them.
func NewServer(t testing.TB, fn transformer.Func, opts ...transformer.Option) *Server {
	t.Helper()
	s := &Server{FQNRoot: t.TempDir(), Token: rand.Text()}
	h, err := transformer.New(fn, append([]transformer.Option{
		transformer.WithFQNRoot(s.FQNRoot),
		transformer.WithToken(s.Token),
		transformer.WithLogger(slog.New(slog.NewTextHandler(t.Output(), nil))),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	s.Handler = h
	ts := httptest.NewServer(h)
	s.URL, s.Client = ts.URL, ts.Client()
	s.Client.Transport = WithToken(s.Client.Transport, s.Token)
	s.src = httptest.NewServer(http.HandlerFunc(s.serveBlob))
	t.Cleanup(func() {
		s.wsMu.Lock()
		if s.ws != nil {
			s.ws.Close()
		}
		s.wsMu.Unlock()
		// Ends the ws sessions, which httptest does not track.
		_ = h.Shutdown(context.Background()) // fails only when its ctx ends, which Background never does
		ts.Close()
		s.src.Close()
	})
	return s
}

// Transform moves in through m and returns the result; see Do.
func (s *Server) Transform(ctx context.Context, m Mechanism, object, args string, in []byte) ([]byte, error) {
	var out bytes.Buffer
	err := s.Do(ctx, m, object, args, in, &out)
	return out.Bytes(), err
}

// Do moves in through m, as object with args, and copies the result to out.
// A failed object returns a *RemoteError. The ws mechanisms share one
// connection across calls, as the agent's pool does.
func (s *Server) Do(ctx context.Context, m Mechanism, object, args string, in []byte, out io.Writer) error {
	switch m {
	case HPush:
		return s.doHTTP(ctx, http.MethodPut, object, wire.Query{Args: args}, bytes.NewReader(in), out)
	case HPull:
		return s.DoSrc(ctx, object, args, s.PutSource(in), out)
	case WS:
		return s.doWS(ctx, wire.Control{Object: object, Args: args}, bytes.NewReader(in), out)
	}
	fqn, err := s.PutFile(in)
	if err != nil {
		return err
	}
	return s.DoFQN(ctx, m, object, args, fqn, out)
}

// DoFQN asks for the transformation of the file fqn through m, one of
// HPushFQN, HPullFQN and WSFQN.
func (s *Server) DoFQN(ctx context.Context, m Mechanism, object, args, fqn string, out io.Writer) error {
	switch m {
	case HPushFQN:
		return s.doHTTP(ctx, http.MethodPut, object, wire.Query{Args: args, FQN: fqn}, nil, out)
	case HPullFQN:
		return s.doHTTP(ctx, http.MethodGet, object, wire.Query{Args: args, FQN: fqn}, nil, out)
	case WSFQN:
		return s.doWS(ctx, wire.Control{Object: object, Args: args, FQN: fqn}, nil, out)
	}
	return fmt.Errorf("mechanism %q does not take an fqn", m)
}

// DoSrc asks for the hpull transformation of the object at src.
func (s *Server) DoSrc(ctx context.Context, object, args, src string, out io.Writer) error {
	return s.doHTTP(ctx, http.MethodGet, object, wire.Query{Args: args, Src: src}, nil, out)
}

// PutFile stores data in a new file under FQNRoot and returns its path.
func (s *Server) PutFile(data []byte) (string, error) {
	fqn := filepath.Join(s.FQNRoot, "object-"+strconv.FormatInt(s.seq.Add(1), 10))
	return fqn, os.WriteFile(fqn, data, 0o600)
}

// PutSource makes data available on the source server and returns its URL:
// an in-flight URL on loopback, the caller's address, which the transformer
// accepts as the node agent's in-flight objects without any stores file.
func (s *Server) PutSource(data []byte) string {
	path := wire.PathInflight + rand.Text()
	s.blobs.Store(path, data)
	return s.src.URL + path
}

func (s *Server) serveBlob(w http.ResponseWriter, r *http.Request) {
	data, ok := s.blobs.Load(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data.([]byte))))
	w.Write(data.([]byte))
}

func (s *Server) doHTTP(ctx context.Context, method, object string, q wire.Query, body io.Reader, out io.Writer) error {
	return DoHTTP(ctx, s.Client, method, wire.ObjectURL(s.URL, object, q), body, out)
}

// DoHTTP sends one hpush or hpull request and copies a successful answer to
// out; any other answer returns a *RemoteError.
func DoHTTP(ctx context.Context, c *http.Client, method, url string, body io.Reader, out io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		return &RemoteError{Status: resp.StatusCode, Message: string(msg)}
	}
	_, err = io.Copy(out, resp.Body)
	return err
}

// doWS sends one object on the shared connection, dialling it if needed. A
// connection that failed is dropped, so the next call dials afresh.
func (s *Server) doWS(ctx context.Context, ctrl wire.Control, in io.Reader, out io.Writer) error {
	s.wsMu.Lock()
	defer s.wsMu.Unlock()
	if s.ws == nil {
		c, err := DialWS(ctx, s.URL, s.Token)
		if err != nil {
			return err
		}
		s.ws = c
	}
	err := s.ws.Do(ctx, ctrl, in, out)
	if _, failed := errors.AsType[*RemoteError](err); err != nil && !failed {
		s.ws.conn.CloseNow()
		s.ws = nil
	}
	return err
}

// WithToken returns a RoundTripper that sends token as the node agent's
// credential on every request through rt (nil: http.DefaultTransport).
func WithToken(rt http.RoundTripper, token string) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return tokenTransport{rt: rt, token: token}
}

type tokenTransport struct {
	rt    http.RoundTripper
	token string
}

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(wire.HeaderTransformerToken, t.token)
	return t.rt.RoundTrip(r)
}

// EndlessBody is a request body that yields bytes until it is closed: an
// object larger than every buffer on the way, so a server never reaches its
// end while the test runs.
type EndlessBody struct {
	closed chan struct{}
	once   sync.Once
}

// NewEndlessBody returns an EndlessBody; close it when the test ends.
func NewEndlessBody() *EndlessBody { return &EndlessBody{closed: make(chan struct{})} }

func (e *EndlessBody) Read(p []byte) (int, error) {
	select {
	case <-e.closed:
		return 0, io.EOF
	default:
		return len(p), nil
	}
}

// Close ends the body at its next read.
func (e *EndlessBody) Close() error {
	e.once.Do(func() { close(e.closed) })
	return nil
}
