package agent

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/noderun"
)

// waitUntil polls cond until it holds; the test's own deadline bounds it.
func waitUntil(t testing.TB, cond func() bool) {
	t.Helper()
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

// wantTooMany checks a 429 in the agent's error shape that names the limit
// and says to retry.
func wantTooMany(t *testing.T, a answer, limit string) {
	t.Helper()
	if a.status != http.StatusTooManyRequests {
		t.Fatalf("answer %d %s, want 429", a.status, a.body)
	}
	e := a.apiError(t)
	if !strings.Contains(e.Error, limit) || !strings.Contains(e.Error, "retry later") || e.Node != testNode {
		t.Errorf("429 says %+v; want the limit %s and retry later", e, limit)
	}
}

// cappedRun is a run into its own destination with workers, whose objects
// the gate holds.
func cappedRun(dst string, workers int) wire.NodeRunSpec {
	s := prefixRun("t", workers)
	s.UID, s.Destination.Prefix = "uid-"+dst, dst
	return s
}

func TestNodeRunsCap(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxOfflineRuns = 1 })
	e.addTransform("t", etlv1alpha1.CommHPush, "", hang)
	e.dataset(3)
	if a, _ := e.putRun("first", cappedRun("out", 1)); a.status != http.StatusOK {
		t.Fatalf("first run: %d %s", a.status, a.body)
	}
	a, _ := e.putRun("second", cappedRun("out2", 1))
	wantTooMany(t, a, "--max-offline-runs")
	// A run that ended frees its share.
	e.abandonRun("first")
	if a, _ := e.putRun("next", cappedRun("out3", 1)); a.status != http.StatusOK {
		t.Fatalf("run after the first ended: %d %s", a.status, a.body)
	}
}

func TestNodeRunWorkersCap(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxOfflineWorkers = 5 })
	e.addTransform("t", etlv1alpha1.CommHPush, "", hang)
	e.dataset(3)
	if a, _ := e.putRun("first", cappedRun("out", 4)); a.status != http.StatusOK {
		t.Fatalf("first run: %d %s", a.status, a.body)
	}
	a, _ := e.putRun("second", cappedRun("out2", 2))
	wantTooMany(t, a, "--max-offline-workers")
	if a, _ := e.putRun("third", cappedRun("out3", 1)); a.status != http.StatusOK {
		t.Fatalf("a run within the workers left: %d %s", a.status, a.body)
	}
	e.abandonRun("first")
	e.abandonRun("third")
	if a, _ := e.putRun("fourth", cappedRun("out4", 5)); a.status != http.StatusOK {
		t.Fatalf("run after the others ended: %d %s", a.status, a.body)
	}
}

// abandonRun stops run name at once, as a closing agent does: its objects
// hang until their context ends, so a suspension would wait for their
// timeout.
func (e *env) abandonRun(name string) {
	e.t.Helper()
	run := e.agent.runs.Get(noderun.Key{Namespace: "default", Name: name})
	run.Abandon()
	<-run.Done()
}

func TestStreamsCap(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxStreams = 1 })
	e.addTransform("t", etlv1alpha1.CommWS, "", echo)
	c := dialStream(t, e, "t")
	// Refused before the upgrade: a plain GET gets the JSON error.
	wantTooMany(t, e.do(http.MethodGet, e.url+PathStream+"default/t", nil), "--max-streams")
	c.conn.CloseNow()
	waitUntil(t, func() bool { return e.streamsOpen() == 0 })
	c = dialStream(t, e, "t")
	if err := c.send("x", "", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := c.receive(&out); err != nil || out.String() != "hi" {
		t.Errorf("stream after the first closed: %q %v", out.String(), err)
	}
}

// TestInlineRequestsCap: with the node's inline requests all held by a slow
// transformer, one more is refused with 429 naming the flag, and once they
// have been answered the next is served.
func TestInlineRequestsCap(t *testing.T) {
	const limit = 3
	e := newEnv(t, func(o *Options) { o.MaxInlineRequests = limit })
	// The first limit objects wait for release; any later one is answered
	// at once.
	release := make(chan struct{})
	releaseAll := sync.OnceFunc(func() { close(release) })
	var arrived atomic.Int32
	e.addTransform("slow", etlv1alpha1.CommHPush, "", func(ctx context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		io.Copy(io.Discard, in)
		if arrived.Add(1) <= limit {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return strings.NewReader("done"), nil
	})
	t.Cleanup(releaseAll) // before the transformer's shutdown waits for its objects
	e.writeObject("obj", []byte("x"))
	url := e.transformURL("slow", "obj", wire.Query{})
	held := make(chan int, limit)
	for range limit {
		go func() {
			resp, err := e.client.Get(url)
			if err != nil {
				held <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			held <- resp.StatusCode
		}()
	}
	waitUntil(t, func() bool { return arrived.Load() == limit })
	wantTooMany(t, e.do(http.MethodGet, url, nil), "--max-inline-requests")
	// A PUT counts alike.
	wantTooMany(t, e.put("slow", "obj", wire.Query{}, []byte("x")), "--max-inline-requests")
	releaseAll()
	for range limit {
		if code := <-held; code != http.StatusOK {
			t.Errorf("a held request ended with %d, want 200", code)
		}
	}
	waitUntil(t, func() bool { return e.agent.limits.inline.Held() == 0 })
	if a := e.do(http.MethodGet, url, nil); a.status != http.StatusOK || string(a.body) != "done" {
		t.Errorf("request after the held ones ended: %d %s", a.status, a.body)
	}
}

func TestNewRefusesZeroLimits(t *testing.T) {
	for _, set := range []func(*Options){
		func(o *Options) { o.MaxOfflineRuns = 0 },
		func(o *Options) { o.MaxOfflineWorkers = 0 },
		func(o *Options) { o.MaxLargeStorePuts = 0 },
		func(o *Options) { o.MaxStreams = 0 },
		func(o *Options) { o.MaxInlineRequests = 0 },
		func(o *Options) { o.StreamIdleTimeout = 0 },
		func(o *Options) { o.WriteTimeout = 0 },
		func(o *Options) { o.PingInterval = 0 },
		func(o *Options) { o.Access = nil },
	} {
		o := DefaultOptions()
		o.DataRoot, o.Resolver, o.Access = t.TempDir(), &fakeResolver{}, (*rbac)(nil)
		set(&o)
		if _, err := New(o); err == nil {
			t.Errorf("New accepted %+v", o)
		}
	}
}

// TestNodeRunStalledTransformerFreesItsSlot: a run whose hpull transformer
// stops reading every object fails each within the object timeout, with the
// write timeout far off, ends, and frees the node's only run slot for the
// next run.
func TestNodeRunStalledTransformerFreesItsSlot(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxOfflineRuns = 1 })
	e.addStallingPull("t", "")
	e.setTimeout("t", 100*time.Millisecond)
	for _, object := range []string{"raw/a", "raw/b"} {
		e.writeSparse(object, beyondSocketBuffers)
	}
	for _, run := range []string{"first", "second"} {
		spec := cappedRun(run, 1)
		spec.ContinueOnError = true
		s := e.runToEnd(run, spec)
		wantCounts(t, s, etlv1alpha1.RunFailed, etlv1alpha1.RunCounts{PlannedObjects: 2, PlannedBytes: 2 * beyondSocketBuffers, FailedObjects: 2})
		for _, oe := range s.Errors {
			if oe.StatusCode != http.StatusGatewayTimeout || !strings.Contains(oe.Message, "object timeout") {
				t.Errorf("run %s: %s failed with %d %q, want the object timeout", run, oe.Object, oe.StatusCode, oe.Message)
			}
		}
	}
}
