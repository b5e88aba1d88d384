package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/access"
)

// authEnv is an env whose callers are checked by a fake RBAC that knows the
// tokens "alice" and "bob", who may do nothing yet.
func authEnv(t *testing.T) (*env, *rbac) {
	f := &rbac{allowed: map[string]map[string]bool{"alice": {}, "bob": {}}}
	e := newEnv(t, func(o *Options) { o.Access = f })
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	e.addTransform("u", etlv1alpha1.CommHPush, "", tag("u"))
	e.writeObject("obj", []byte("data"))
	return e, f
}

func use(ns, name string) access.Request {
	return access.Request{Verb: access.VerbUse, Namespace: ns, Resource: access.ResourceTransform, Name: name}
}

// TestEveryEndpointAsksRBAC: each endpoint refuses a caller with no token
// (401, saying how to get one) and one RBAC does not allow (403, before it
// looks anything up), asks exactly the requests of the RBAC model
// (docs/datapath-rbac.md), and serves once they are granted.
func TestEveryEndpointAsksRBAC(t *testing.T) {
	type call struct {
		method, path, body string
		asks               []access.Request
		ok                 int
	}
	get := dataAccess(readData, "default")
	calls := map[string]call{
		"PUT a body":        {"PUT", PathTransform + "default/t/obj", "x", []access.Request{use("default", "t")}, 200},
		"GET a node object": {"GET", PathTransform + "default/t/obj", "", []access.Request{use("default", "t"), get}, 200},
		"pipeline":          {"PUT", PathTransform + "default/t>>u/obj", "x", []access.Request{use("default", "t"), use("default", "u")}, 200},
		"another namespace": {"PUT", PathTransform + "team-b/t/obj", "x", []access.Request{use("team-b", "t")}, 404},
		"node runs":         {"PUT", wire.NodeRunsPath + "default/r1", `{"uid":"u1","pipeline":"t","source":{"prefix":"in"},"destination":{"prefix":"out"},"workers":1,"dryRun":true}`, []access.Request{manageRuns}, 200},
		"counters":          {"GET", wire.StatsPath, "", []access.Request{{Verb: "get", Path: wire.StatsPath}}, 200},
		"metrics":           {"GET", PathMetrics, "", []access.Request{{Verb: "get", Path: PathMetrics}}, 200},
	}
	for name, c := range calls {
		t.Run(name, func(t *testing.T) {
			e, f := authEnv(t)
			os.Mkdir(filepath.Join(e.root, "in"), 0o755)
			do := func() answer { return e.do(c.method, e.url+c.path, strings.NewReader(c.body)) }
			a := do()
			if a.status != http.StatusUnauthorized || !strings.Contains(a.apiError(t).Error, "token") {
				t.Errorf("no token: %d %s, want 401 saying to send a token", a.status, a.body)
			}
			e.token = "alice"
			if a := do(); a.status != http.StatusForbidden {
				t.Errorf("not allowed: %d %s, want 403", a.status, a.body)
			}
			f.grant("alice", c.asks[:len(c.asks)-1]...)
			if a := do(); a.status != http.StatusForbidden {
				t.Errorf("allowed all but %s: %d %s, want 403", c.asks[len(c.asks)-1], a.status, a.body)
			}
			f.grant("alice", c.asks...)
			f.asked = nil
			if a := do(); a.status != c.ok {
				t.Errorf("allowed: %d %s, want %d", a.status, a.body, c.ok)
			}
			var want []string
			for _, q := range c.asks {
				want = append(want, "alice: "+q.String())
			}
			if !slices.Equal(f.asked, want) {
				t.Errorf("asked RBAC\n%s\nwant\n%s", strings.Join(f.asked, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	t.Run("healthz needs nothing", func(t *testing.T) {
		e, _ := authEnv(t)
		if a := e.do("GET", e.url+PathHealth, nil); a.status != http.StatusOK {
			t.Errorf("healthz: %d %s", a.status, a.body)
		}
	})
	t.Run("a stream", func(t *testing.T) {
		e, f := authEnv(t)
		e.addTransform("w", etlv1alpha1.CommWS, "", echo)
		e.token = "bob"
		if a := e.do("GET", e.url+PathStream+"default/w", nil); a.status != http.StatusForbidden {
			t.Errorf("not allowed: %d %s, want 403 before the upgrade", a.status, a.body)
		}
		f.grant("bob", use("default", "w"))
		if a := e.do("GET", e.url+PathStream+"default/w", nil); a.status != http.StatusUpgradeRequired {
			t.Errorf("allowed, without an upgrade: %d %s, want the WebSocket handshake's 426", a.status, a.body)
		}
	})
}

// TestThrottledReviewsAnswer429: past the reviewer's bucket a caller it has
// not reviewed is answered 429, with a Retry-After and a message naming the
// limit, and the API server is not asked.
func TestThrottledReviewsAnswer429(t *testing.T) {
	cs := fake.NewClientset()
	var reviews atomic.Int32
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		reviews.Add(1)
		return true, a.(k8stesting.CreateAction).GetObject(), nil // not authenticated
	})
	opts := access.DefaultOptions(wire.Audience)
	opts.QPS, opts.Burst = 0.25, 1
	e := newEnv(t, func(o *Options) {
		o.Access = access.NewReviewer(cs.AuthenticationV1().TokenReviews(), cs.AuthorizationV1().SubjectAccessReviews(), opts)
	})
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	for i, want := range []int{http.StatusUnauthorized, http.StatusTooManyRequests} {
		e.token = fmt.Sprintf("header.payload.%d", i)
		r, body := e.request(http.MethodPut, e.url+PathTransform+"default/t/obj", strings.NewReader("x"))
		if r.code != want {
			t.Fatalf("unknown token %d: %d %s, want %d", i+1, r.code, body, want)
		}
		if want == http.StatusTooManyRequests && (r.header.Get("Retry-After") != "4" || !strings.Contains(string(body), "--review-qps")) {
			t.Errorf("throttled: Retry-After %q, %s; want 4 (s, at 0.25 reviews a second) and the limit named", r.header.Get("Retry-After"), body)
		}
	}
	if n := reviews.Load(); n != 1 {
		t.Errorf("%d TokenReviews, want the bucket's 1", n)
	}
}

// TestLongNamesAreRefusedBeforeReview: a namespace or Transform name longer
// than Kubernetes allows is answered 400 naming the field and its limit, and
// RBAC is asked nothing: 1024 requests of 60 KiB names cost no review.
func TestLongNamesAreRefusedBeforeReview(t *testing.T) {
	e, f := authEnv(t)
	e.token = "alice"
	long := strings.Repeat("x", 60<<10)
	check := func(path, field, limit string) {
		t.Helper()
		a := e.do(http.MethodPut, e.url+path, strings.NewReader("x"))
		if msg := string(a.body); a.status != http.StatusBadRequest || !strings.Contains(msg, field) || !strings.Contains(msg, limit) || len(msg) > 1<<10 {
			t.Fatalf("%.60s...: %d %.300s; want a short 400 naming %s and its limit, %s", path, a.status, msg, field, limit)
		}
	}
	for i := range 1024 {
		check(PathTransform+"default/"+fmt.Sprint(i, long)+"/obj", "transform name", "253")
	}
	check(PathTransform+"default/t>>"+long+"/obj", "transform name", "253")
	check(PathStream+"default/"+long, "transform name", "253")
	check(PathTransform+strings.Repeat("n", 64)+"/t/obj", "namespace", "63")
	check(wire.PathObjects+long+"/obj", "namespace", "63")
	if len(f.asked) > 0 {
		t.Errorf("RBAC was asked %d times, first %.100s; want never", len(f.asked), f.asked[0])
	}
}

// TestNamespacesKeepTheirData: a request names objects of its own
// namespace's directory only; another namespace's data is out of reach,
// by name and by symlink.
func TestNamespacesKeepTheirData(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	other := filepath.Join(e.base, "team-b")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "secret"), []byte("team-b's"), 0o644)
	os.WriteFile(filepath.Join(e.base, "top"), []byte("the node's"), 0o644)
	os.Symlink("../team-b/secret", filepath.Join(e.root, "link"))
	os.Symlink("../team-b", filepath.Join(e.root, "dir-link"))
	e.writeObject("mine", []byte("default's"))
	if a := e.get("t", "mine", wire.Query{}); a.status != http.StatusOK || string(a.body) != "default's" {
		t.Fatalf("own object: %d %s", a.status, a.body)
	}
	for object, want := range map[string]int{
		"secret": 404, "top": 404, "link": 400, "dir-link/secret": 400,
		"..%2Fteam-b%2Fsecret": 400, "%2E%2E/top": 400,
	} {
		a := e.do("GET", e.url+PathTransform+"default/t/"+object, nil)
		if a.status != want || strings.Contains(string(a.body), "team-b's") || strings.Contains(string(a.body), "the node's") {
			t.Errorf("%s: %d %s, want %d", object, a.status, a.body, want)
		}
	}
	// A namespace with no directory on the node has no objects.
	e.resolver.targets["team-c/t"] = e.resolver.targets["default/t"]
	if a := e.do("GET", e.url+PathTransform+"team-c/t/mine", nil); a.status != http.StatusNotFound {
		t.Errorf("a namespace without data: %d %s, want 404", a.status, a.body)
	}
}

// TestInflightOnlyForItsTransformer: bytes in flight are served once, to the
// address of the transformer they were issued to; another caller with the
// id gets 404 and does not use them up.
func TestInflightOnlyForItsTransformer(t *testing.T) {
	var f inflight
	id, _, remove := f.add(context.Background(), strings.NewReader("bytes"), 5, Target{URL: "http://10.1.2.3:8000"})
	defer remove()
	get := func(from string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", wire.PathInflight+id, nil)
		r.RemoteAddr = from
		w := httptest.NewRecorder()
		f.serve(w, r)
		return w
	}
	if w := get("10.9.9.9:4000"); w.Code != http.StatusNotFound {
		t.Errorf("another caller: %d %q, want 404", w.Code, w.Body)
	}
	if w := get("10.1.2.3:5000"); w.Code != http.StatusOK || w.Body.String() != "bytes" {
		t.Errorf("its transformer: %d %q, want the bytes", w.Code, w.Body)
	}
	if w := get("10.1.2.3:5000"); w.Code != http.StatusNotFound {
		t.Errorf("a second fetch: %d %q, want 404", w.Code, w.Body)
	}
}
