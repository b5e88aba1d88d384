package agent

import (
	"net/http"
	"strings"
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
	waitUntil(t, func() bool {
		e.agent.limits.mu.Lock()
		defer e.agent.limits.mu.Unlock()
		return e.agent.limits.streams == 0
	})
	c = dialStream(t, e, "t")
	if err := c.send("x", "", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := c.receive(&out); err != nil || out.String() != "hi" {
		t.Errorf("stream after the first closed: %q %v", out.String(), err)
	}
}

func TestNewRefusesZeroLimits(t *testing.T) {
	for _, set := range []func(*Options){
		func(o *Options) { o.MaxOfflineRuns = 0 },
		func(o *Options) { o.MaxOfflineWorkers = 0 },
		func(o *Options) { o.MaxStreams = 0 },
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
