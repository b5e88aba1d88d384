package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// handTransformer is an hpush transformer not built on the SDK: it echoes objects, refusing
// requests without token when checks is set, and records what it was sent.
type handTransformer struct {
	checks bool
	token  string

	mu   sync.Mutex
	seen []string // "METHOD path header-present"
}

func (h *handTransformer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := r.Header.Get(wire.HeaderTransformerToken)
	h.mu.Lock()
	h.seen = append(h.seen, r.Method+" "+r.URL.Path+" "+map[bool]string{true: "with", false: "without"}[got != ""])
	h.mu.Unlock()
	if h.checks && got != h.token {
		http.Error(w, "no credential", http.StatusUnauthorized)
		return
	}
	_, _ = io.Copy(w, r.Body)
}

func (h *handTransformer) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

// serveHand makes h the hpush transformer of default/name.
func (e *env) serveHand(name string, h *handTransformer) {
	s := httptest.NewServer(h)
	e.t.Cleanup(s.Close)
	h.token = "k1.token-of-" + name
	e.resolver.mu.Lock()
	defer e.resolver.mu.Unlock()
	e.resolver.targets["default/"+name] = Target{
		Namespace: "default", Name: name, Communication: etlv1alpha1.CommHPush,
		ObjectTimeout: 10 * time.Second, URL: s.URL, Pod: name + "-pod", Token: h.token,
	}
}

func TestRequireTransformerAuth(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.RequireTransformerAuth = true })
	e.writeObject("obj", []byte("namespace data"))
	open, closed := &handTransformer{}, &handTransformer{checks: true}
	e.serveHand("open", open)
	e.serveHand("closed", closed)

	// A transformer that answers without the credential gets no object, now or later.
	for range 2 {
		a := e.get("open", "obj", wire.Query{})
		if a.status != http.StatusServiceUnavailable || !strings.Contains(string(a.body), "docs/transforms.md#credential") || !strings.Contains(string(a.body), "open-pod") {
			t.Errorf("through the open transformer: %d %s, want 503 naming its pod and the contract", a.status, a.body)
		}
	}
	if got, want := open.requests(), []string{"PUT " + PathAuthProbe + " without"}; !slices.Equal(got, want) {
		t.Errorf("the open transformer was sent %q, want only one probe, without the credential", got)
	}

	// One that refuses it is probed once, then used with the credential.
	for range 2 {
		if a := e.get("closed", "obj", wire.Query{}); a.status != http.StatusOK || string(a.body) != "namespace data" {
			t.Errorf("through the closed transformer: %d %s", a.status, a.body)
		}
	}
	if got, want := closed.requests(), []string{"PUT " + PathAuthProbe + " without", "PUT /obj with", "PUT /obj with"}; !slices.Equal(got, want) {
		t.Errorf("the closed transformer was sent %q, want %q", got, want)
	}
}

func TestWithoutRequireTransformerAuthNothingIsProbed(t *testing.T) {
	e := newEnv(t)
	e.writeObject("obj", []byte("namespace data"))
	open := &handTransformer{}
	e.serveHand("open", open)
	if a := e.get("open", "obj", wire.Query{}); a.status != http.StatusOK {
		t.Errorf("%d %s", a.status, a.body)
	}
	if got, want := open.requests(), []string{"PUT /obj with"}; !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
}

func TestAnUnansweredProbeIsNotKept(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.RequireTransformerAuth = true })
	e.writeObject("obj", []byte("namespace data"))
	h := &handTransformer{checks: true}
	e.serveHand("t", h)
	e.resolver.mu.Lock()
	target := e.resolver.targets["default/t"]
	up := target.URL
	target.URL = "http://127.0.0.1:1" // nothing listens
	e.resolver.targets["default/t"] = target
	e.resolver.mu.Unlock()
	if a := e.get("t", "obj", wire.Query{}); a.status != http.StatusServiceUnavailable || !strings.Contains(string(a.body), "did not answer") {
		t.Errorf("with the transformer unreachable: %d %s, want 503 saying it did not answer", a.status, a.body)
	}
	e.resolver.mu.Lock()
	target.URL = up
	e.resolver.targets["default/t"] = target
	e.resolver.mu.Unlock()
	if a := e.get("t", "obj", wire.Query{}); a.status != http.StatusOK {
		t.Errorf("once it answers: %d %s", a.status, a.body)
	}
}
