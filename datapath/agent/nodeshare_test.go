package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// alsoIn makes the transformer of default/name namespace ns's Transform
// of the same name too.
func (e *env) alsoIn(ns, name string) {
	e.resolver.mu.Lock()
	defer e.resolver.mu.Unlock()
	t := e.resolver.targets["default/"+name]
	t.Namespace = ns
	e.resolver.targets[ns+"/"+name] = t
}

// wantFairShare checks the 429 of a namespace over its share: it names the
// namespace, what it holds, the limit and its flag.
func wantFairShare(t *testing.T, a answer, ns, holds, flag string) {
	t.Helper()
	wantTooMany(t, a, flag)
	if msg := a.apiError(t).Error; !strings.Contains(msg, "namespace "+ns+" holds "+holds) || !strings.Contains(msg, "fair share") {
		t.Errorf("429 says %q; want namespace %s holding %s over its fair share", msg, ns, holds)
	}
}

// objectGate holds the objects named in it until each is let go.
type objectGate struct {
	mu      sync.Mutex
	holds   map[string]chan struct{}
	arrived sync.WaitGroup
}

func newObjectGate(objects ...string) *objectGate {
	g := &objectGate{holds: map[string]chan struct{}{}}
	for _, o := range objects {
		g.holds[o] = make(chan struct{})
		g.arrived.Add(1)
	}
	return g
}

func (g *objectGate) transform(ctx context.Context, in io.Reader, object, _ string) (io.Reader, error) {
	data, _ := io.ReadAll(in)
	g.mu.Lock()
	hold, ok := g.holds[object]
	g.mu.Unlock()
	if ok {
		g.arrived.Done()
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return strings.NewReader(string(data)), nil
}

func (g *objectGate) letGo(object string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if hold, ok := g.holds[object]; ok {
		close(hold)
		delete(g.holds, object)
	}
}

func (g *objectGate) letAllGo() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for o, hold := range g.holds {
		close(hold)
		delete(g.holds, o)
	}
}

// TestInlineRequestsFairShare: namespace default, alone, takes all the
// node's inline requests; team-b is refused naming the limit, and from
// then on default cannot take back what it gives up beyond its share of
// two, while team-b gets it.
func TestInlineRequestsFairShare(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxInlineRequests = 2 })
	g := newObjectGate("a1", "a2")
	t.Cleanup(g.letAllGo) // before the transformer's shutdown waits for its objects
	e.addTransform("t", etlv1alpha1.CommHPush, "", g.transform)
	e.alsoIn("team-b", "t")
	putIn := func(ns, object string) answer {
		return e.do(http.MethodPut, wire.ObjectURL(e.url+PathTransform+ns+"/t", object, wire.Query{}), strings.NewReader(object))
	}
	codes := map[string]chan int{}
	for _, o := range []string{"a1", "a2"} {
		code := make(chan int, 1)
		codes[o] = code
		go func() { code <- putIn("default", o).status }()
	}
	g.arrived.Wait()
	wantTooMany(t, putIn("team-b", "b1"), "--max-inline-requests")
	g.letGo("a1")
	if code := <-codes["a1"]; code != http.StatusOK {
		t.Fatalf("a1: %d", code)
	}
	waitUntil(t, func() bool { return e.agent.limits.inline.Held() == 1 })
	wantFairShare(t, putIn("default", "a3"), "default", "1", "--max-inline-requests")
	if a := putIn("team-b", "b2"); a.status != http.StatusOK || string(a.body) != "b2" {
		t.Errorf("team-b within its share: %d %s", a.status, a.body)
	}
	g.letGo("a2")
	if code := <-codes["a2"]; code != http.StatusOK {
		t.Fatalf("a2: %d", code)
	}
}

// TestNodeRunsFairShare: namespace default, alone, takes both of the
// node's run slots; team-b's run is refused naming the limit, and once one
// of default's runs ends, its next run is refused as over its share while
// team-b's is admitted.
func TestNodeRunsFairShare(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxOfflineRuns = 2 })
	e.addTransform("t", etlv1alpha1.CommHPush, "", hang)
	e.alsoIn("team-b", "t")
	e.dataset(3)
	putRunIn := func(ns, name string, spec wire.NodeRunSpec) answer {
		body, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		return e.do(http.MethodPut, e.url+wire.NodeRunsPath+ns+"/"+name, strings.NewReader(string(body)))
	}
	for _, name := range []string{"first", "second"} {
		if a := putRunIn("default", name, cappedRun(name, 1)); a.status != http.StatusOK {
			t.Fatalf("run %s: %d %s", name, a.status, a.body)
		}
	}
	wantTooMany(t, putRunIn("team-b", "b1", cappedRun("b1", 1)), "--max-offline-runs")
	e.abandonRun("first")
	wantFairShare(t, putRunIn("default", "third", cappedRun("third", 1)), "default", "1", "--max-offline-runs")
	if a := putRunIn("team-b", "b2", cappedRun("b2", 1)); a.status != http.StatusOK {
		t.Errorf("team-b's run within its share: %d %s", a.status, a.body)
	}
	e.abandonRun("second")
}
