package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/sdk/transformer"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

const testNode = "node-a"

// fakeResolver resolves Transforms from a map, as the cache would.
type fakeResolver struct {
	mu      sync.Mutex
	targets map[string]Target
	errs    map[string]error
}

func (r *fakeResolver) Lookup(_ context.Context, namespace, name string) (Target, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := namespace + "/" + name
	if err, ok := r.errs[key]; ok {
		return Target{}, err
	}
	if t, ok := r.targets[key]; ok {
		return t, nil
	}
	return Target{}, ErrUnknownTransform
}

// rbac is a fake Authorizer: callers are tokens, and each token may do the
// requests listed for it (by their String). A nil rbac allows every caller.
type rbac struct {
	mu      sync.Mutex
	allowed map[string]map[string]bool // token → request → allowed
	asked   []string                   // "token: request", in order
	// unanswered, when set, is what Authorize returns: a review that got no
	// answer.
	unanswered error
}

func (f *rbac) Check(_ context.Context, r *http.Request, reqs ...access.Request) (access.Caller, error) {
	if f == nil {
		return access.Caller{Name: "test"}, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	token := access.BearerToken(r)
	grants, ok := f.allowed[token]
	if !ok {
		return access.Caller{}, fmt.Errorf("%w: unknown token %q", access.ErrUnauthenticated, token)
	}
	for _, q := range reqs {
		f.asked = append(f.asked, token+": "+q.String())
		if !grants[q.String()] {
			return access.Caller{Name: token}, fmt.Errorf("%w: %s may not %s", access.ErrForbidden, token, q)
		}
	}
	return access.Caller{Name: token}, nil
}

// Authenticate knows the tokens that were granted something (or nothing:
// grant with no requests); each is its own caller's name.
func (f *rbac) Authenticate(_ context.Context, token string) (access.Caller, error) {
	if f == nil {
		return access.Caller{Name: token}, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.allowed[token]; !ok {
		return access.Caller{}, fmt.Errorf("%w: unknown token %q", access.ErrUnauthenticated, token)
	}
	return access.Caller{Name: token}, nil
}

// Authorize asks again about a caller Check answered, whose name is its
// token.
func (f *rbac) Authorize(_ context.Context, c access.Caller, q access.Request) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, c.Name+": "+q.String())
	if f.unanswered != nil {
		return f.unanswered
	}
	if !f.allowed[c.Name][q.String()] {
		return fmt.Errorf("%w: %s may not %s", access.ErrForbidden, c.Name, q)
	}
	return nil
}

// revoke takes reqs back from token, as removing a RoleBinding does.
func (f *rbac) revoke(token string, reqs ...access.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range reqs {
		delete(f.allowed[token], q.String())
	}
}

// setUnanswered makes Authorize fail with err (nil: answer again).
func (f *rbac) setUnanswered(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.unanswered = err
}

// askedCount is how many questions the fake has been asked.
func (f *rbac) askedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

// grant lets token do reqs.
func (f *rbac) grant(token string, reqs ...access.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.allowed[token] == nil {
		f.allowed[token] = map[string]bool{}
	}
	for _, q := range reqs {
		f.allowed[token][q.String()] = true
	}
}

// env is an agent on loopback with its data root, and transformers added
// to it by name. Its Transforms are of namespace default, whose data is
// root (<DataRoot>/default).
type env struct {
	t        testing.TB
	base     string
	root     string
	agent    *Agent
	url      string
	client   *http.Client
	resolver *fakeResolver
	// token is sent with every request of do, when set.
	token string
}

// newEnv starts an env; its data root is a temporary directory unless a
// configure sets DataRoot.
func newEnv(t testing.TB, configure ...func(*Options)) *env {
	e := &env{t: t, resolver: &fakeResolver{targets: map[string]Target{}, errs: map[string]error{}}}
	srv := httptest.NewUnstartedServer(nil)
	opts := DefaultOptions()
	opts.Node, opts.DataRoot, opts.Resolver = testNode, t.TempDir(), e.resolver
	opts.Access = (*rbac)(nil)
	opts.AdvertiseURL = "http://" + srv.Listener.Addr().String()
	for _, c := range configure {
		c(&opts)
	}
	e.base = opts.DataRoot
	e.root = filepath.Join(e.base, "default")
	if err := os.Mkdir(e.root, 0o755); err != nil {
		t.Fatal(err)
	}
	// The test's transformers see the namespace's directory where it is,
	// as pods see it mounted at wire.DataRoot.
	opts.TransformerDataRoot = e.root
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = a
	srv.Start()
	e.agent, e.url = a, srv.URL
	e.client = &http.Client{Transport: newTransport()}
	t.Cleanup(func() {
		e.client.CloseIdleConnections()
		a.Close()
		srv.Close()
	})
	return e
}

// addTransform serves fn as the Transform default/name on loopback; the
// transformer sees the agent's data root as its fqn root, as a pod that
// mounts it at the same path does.
func (e *env) addTransform(name string, comm etlv1alpha1.Communication, arg etlv1alpha1.Argument, fn transformer.Func) *transformertest.Server {
	return e.addServer(name, comm, arg, transformertest.NewServer(e.t, fn, transformer.WithFQNRoot(e.root)))
}

// addServer makes s the transformer of the Transform default/name.
func (e *env) addServer(name string, comm etlv1alpha1.Communication, arg etlv1alpha1.Argument, s *transformertest.Server) *transformertest.Server {
	e.resolver.mu.Lock()
	e.resolver.targets["default/"+name] = Target{
		Namespace: "default", Name: name, Communication: comm, Argument: arg,
		ObjectTimeout: 10 * time.Second, URL: s.URL, Token: s.Token,
	}
	e.resolver.mu.Unlock()
	return s
}

// targetAt is the Target of the transformer at url.
func (e *env) targetAt(url string) Target {
	e.resolver.mu.Lock()
	defer e.resolver.mu.Unlock()
	for _, t := range e.resolver.targets {
		if t.URL == url {
			return t
		}
	}
	e.t.Fatalf("no Transform has its transformer at %s", url)
	return Target{}
}

// poolKey is the key of the ws pool of the transformer at url.
func (e *env) poolKey(url string) poolKey {
	t := e.targetAt(url)
	return poolKey{t.URL, t.Token}
}

func (e *env) setTimeout(name string, d time.Duration) {
	e.editTarget(name, func(t *Target) { t.ObjectTimeout = d })
}

// editTarget changes the Target of the Transform default/name.
func (e *env) editTarget(name string, edit func(*Target)) {
	e.resolver.mu.Lock()
	defer e.resolver.mu.Unlock()
	t := e.resolver.targets["default/"+name]
	edit(&t)
	e.resolver.targets["default/"+name] = t
}

// transformURL is the inline URL of object through name (a pipeline too).
func (e *env) transformURL(name, object string, q wire.Query) string {
	return wire.ObjectURL(e.url+PathTransform+"default/"+name, object, q)
}

// answer is what the agent answered.
type answer struct {
	status int
	body   []byte
}

func (e *env) do(method, url string, body io.Reader) answer {
	e.t.Helper()
	r, data := e.request(method, url, body)
	return answer{status: r.code, body: data}
}

func (e *env) put(name, object string, q wire.Query, data []byte) answer {
	return e.do(http.MethodPut, e.transformURL(name, object, q), bytes.NewReader(data))
}

func (e *env) get(name, object string, q wire.Query) answer {
	return e.do(http.MethodGet, e.transformURL(name, object, q), nil)
}

// apiError decodes a JSON error answer.
func (a answer) apiError(t testing.TB) Error {
	t.Helper()
	var e Error
	if err := json.Unmarshal(a.body, &e); err != nil {
		t.Fatalf("answer %d %q is not a JSON error: %v", a.status, a.body, err)
	}
	return e
}

// Transformer functions for the tests.

func echo(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) { return in, nil }

// tag appends "|<tag>:<args>" to the object, so a pipeline's order shows.
func tag(name string) transformer.Func {
	return func(_ context.Context, in io.Reader, _, args string) (io.Reader, error) {
		return io.MultiReader(in, strings.NewReader("|"+name+":"+args)), nil
	}
}

// fail fails every object with msg, after reading it as a real one would.
func fail(msg string) transformer.Func {
	return func(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		io.Copy(io.Discard, in)
		return nil, errors.New(msg)
	}
}

// hang never answers: it reads its object, so that net/http notices a
// client that goes away, and waits for its object's context to end.
func hang(ctx context.Context, in io.Reader, _, _ string) (io.Reader, error) {
	io.Copy(io.Discard, in)
	<-ctx.Done()
	return nil, ctx.Err()
}

// comms are the communicators every test runs through.
var comms = []etlv1alpha1.Communication{etlv1alpha1.CommHPush, etlv1alpha1.CommHPull, etlv1alpha1.CommIO, etlv1alpha1.CommWS}
