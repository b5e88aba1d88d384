package noderun

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/panics"
	"github.com/mlkube/mlkube/internal/durable"
	"github.com/mlkube/mlkube/internal/status"
)

// upper is Transformers without the agent: every stage upper-cases the object's bytes, read
// from the namespace's directory under base; an object named "bad" fails with 502.
type upper struct{ base string }

func (u upper) ParsePipeline(_, pipeline string) ([]string, error) {
	return strings.Split(pipeline, ">>"), nil
}

func (u upper) Resolve(_ context.Context, ns string, stages []string) (Pipeline, error) {
	if stages[0] == "missing" {
		return nil, status.NotFound(errors.New("transform missing not found"))
	}
	return upperPipeline{dir: filepath.Join(u.base, ns)}, nil
}

type upperPipeline struct{ dir string }

func (p upperPipeline) Transform(_ context.Context, object, _ string, _ Opener, write func(io.Reader) error) error {
	if filepath.Base(object) == "bad" {
		return status.With(http.StatusBadGateway, errors.New("the transformer refused it"))
	}
	b, err := os.ReadFile(filepath.Join(p.dir, object))
	if err != nil {
		return status.NotFound(err)
	}
	return write(bytes.NewReader(bytes.ToUpper(b)))
}

// unbounded writes results as the agent does, without its bounds.
type unbounded struct{}

func (unbounded) Write(root *os.Root, _, name, tmp string, r io.Reader, buf []byte, hooks durable.Hooks) error {
	return durable.Create(root, name, tmp, r, buf, hooks)
}

func (unbounded) Place(_ *os.Root, _, _ string, _ int64, rename func() error) error { return rename() }

// newRuns returns the runs of a node whose namespace default holds files (name → content).
func newRuns(t *testing.T, files map[string]string) (*Runs, string) {
	base := t.TempDir()
	for name, content := range files {
		p := filepath.Join(base, "default", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(base)
	if err != nil {
		t.Fatal(err)
	}
	rs := New(Config{
		Node: "node-a", Root: root, Transformers: upper{base}, Results: unbounded{}, MaxRuns: 1, MaxWorkers: 4,
		Panics: &panics.Reporter{Log: slog.New(slog.DiscardHandler), Count: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "panics"}, []string{"goroutine"})},
		Log:    slog.New(slog.DiscardHandler),
	})
	t.Cleanup(func() {
		rs.Close()
		root.Close()
	})
	return rs, filepath.Join(base, "default")
}

// start plans and starts run name of spec.
func start(t *testing.T, rs *Runs, name string, spec wire.NodeRunSpec) (*Run, error) {
	key := Key{Namespace: "default", Name: name}
	plan, err := rs.Plan(key, spec)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return rs.Start(t.Context(), key, plan)
}

// TestRunsWithoutTheAgent: the executor runs a share through any Transformers, here one
// without transformers or HTTP: results in place, errors recorded, caps and refusals answered
// with their status, and a second Start of a share that ended answering it.
func TestRunsWithoutTheAgent(t *testing.T) {
	rs, dir := newRuns(t, map[string]string{"raw/a": "a", "raw/sub/b": "b", "raw/bad": "x"})
	spec := wire.NodeRunSpec{
		UID: "u1", Pipeline: "up", Workers: 2, ContinueOnError: true,
		Source: etlv1alpha1.RunSource{Prefix: "raw"}, Destination: etlv1alpha1.RunDestination{Prefix: "out"},
	}
	run, err := start(t, rs, "r1", spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := start(t, rs, "r2", spec); status.Of(err) != http.StatusTooManyRequests {
		t.Errorf("a second run past MaxRuns: %v, want 429", err)
	}
	<-run.Done()
	s := run.Status()
	if s.Phase != etlv1alpha1.RunFailed || s.DoneObjects != 2 || s.FailedObjects != 1 || s.Node != "node-a" {
		t.Fatalf("status %+v, want Failed with 2 done and 1 failed on node-a", s)
	}
	if len(s.Errors) != 1 || s.Errors[0].Object != "raw/bad" || s.Errors[0].StatusCode != http.StatusBadGateway {
		t.Errorf("errors %+v, want raw/bad's 502", s.Errors)
	}
	for name, want := range map[string]string{"out/a": "A", "out/sub/b": "B"} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out", wire.ErrorManifest("u1"))); err != nil {
		t.Errorf("no error manifest: %v", err)
	}
	if again, err := start(t, rs, "r1", spec); err != nil || again != run {
		t.Errorf("Start of a share that ended: %v, %v; want the same run", again, err)
	}
	missing := spec
	missing.UID, missing.Pipeline = "u2", "missing"
	if _, err := start(t, rs, "r3", missing); status.Of(err) != http.StatusNotFound {
		t.Errorf("a pipeline that does not resolve: %v, want 404", err)
	}
}

// TestEndedRunsKeepNoNames: an agent remembers up to keptRuns ended runs, each by its counts and
// status, never by the names its source expanded to nor the ones its journal completed: a run of
// the largest template (100000 names, 8 MiB of them) keeps about what a run of one object keeps
// once it ended.
func TestEndedRunsKeepNoNames(t *testing.T) {
	name := "raw/" + strings.Repeat("n", 74) // and 5 digits: 100000 names of 83 bytes
	rs, _ := newRuns(t, map[string]string{name + "00007": "a", name + "99999": "b"})
	heap := func() int64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	const maxKept = 2 << 20
	before := heap()
	run, err := start(t, rs, "r1", wire.NodeRunSpec{
		UID: "u1", Pipeline: "up", Workers: 2,
		Source: etlv1alpha1.RunSource{Template: name + "{00000..99999}"}, Destination: etlv1alpha1.RunDestination{Prefix: "out"},
	})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	if s := run.Status(); s.Phase != etlv1alpha1.RunSucceeded || s.PlannedObjects != 2 || s.DoneObjects != 2 {
		t.Fatalf("status %+v, want Succeeded with 2 objects planned and done", s)
	}
	if run.journal != nil && len(run.journal.done) > 0 {
		t.Errorf("the ended run's journal holds %d names", len(run.journal.done))
	}
	kept := heap() - before
	t.Logf("the ended run keeps %d bytes", kept)
	if kept > maxKept {
		t.Errorf("the ended run of a template of 100000 names keeps %d bytes; want at most %d", kept, maxKept)
	}
	runtime.KeepAlive(rs)
}
