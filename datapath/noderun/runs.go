package noderun

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/dataroot"
	"github.com/mlkube/mlkube/datapath/internal/fairshare"
	"github.com/mlkube/mlkube/datapath/internal/panics"
	"github.com/mlkube/mlkube/internal/durable"
	"github.com/mlkube/mlkube/internal/status"
)

// Transformers is what a run needs of the node agent: the transformers of
// its pipeline on this node, and the agent's way of moving objects through
// them. The agent implements it; the executor never talks to transformers
// itself.
type Transformers interface {
	// ParsePipeline returns the stages of pipeline ("a>>b") in namespace
	// ns, checked as the inline API checks {name}.
	ParsePipeline(ns, pipeline string) ([]string, error)
	// Resolve finds the transformers of stages in namespace ns on this node
	// now; its error carries the status that answers it.
	Resolve(ctx context.Context, ns string, stages []string) (Pipeline, error)
}

// Pipeline moves the objects of one namespace's data through a run's
// transformers.
type Pipeline interface {
	// Transform runs object with args through the pipeline within its
	// object timeout, and hands the result to write. The object is a file
	// of the namespace's data when open is nil; otherwise open fetches its
	// bytes and their size (-1: unknown), within the same timeout, or
	// hands a URL of them on (Opener.Presign). It
	// counts the object in the agent's stats and metrics as an inline one.
	// Its error carries the status that answers it (package status); a
	// panic, of write too, fails the object alone.
	Transform(ctx context.Context, object, args string, open Opener, write func(result io.Reader) error) error
}

// Opener is an object of a store a run reads from.
type Opener interface {
	// Open fetches the object's bytes and their size (-1: unknown).
	Open(ctx context.Context) (io.ReadCloser, int64, error)
	// Presign returns a GET of the object that needs no keys, valid for
	// d, and its size as listed (-1: unknown), or "" when the store's URLs
	// cannot be handed on: a transformer fetches it instead of the agent.
	Presign(ctx context.Context, d time.Duration) (string, int64, error)
}

// Stores opens the object stores runs read from.
type Stores interface {
	// Open returns a client of store, an ObjectStore of namespace ns,
	// signed with the namespace's keys, once it has reached the store's
	// bucket with them: its error says why the store cannot be used
	// (keys refused, no bucket, endpoint unreachable) and never holds a
	// key.
	Open(ctx context.Context, ns string, store wire.RunStore) (Store, error)
}

// Store is one bucket a run reads objects from or writes results to. Its
// errors carry their status (404 for a missing object) and never hold a
// key.
type Store interface {
	// List calls fn with each key under prefix and its size, at most max
	// of them (an error past it).
	List(ctx context.Context, prefix string, max int, fn func(key string, size int64) error) error
	// Get opens object key and returns its bytes and size.
	Get(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Presign returns a GET of object key signed in its query, valid for
	// d and computed without a request, or "" when the store's URLs
	// cannot be handed on.
	Presign(ctx context.Context, key string, d time.Duration) (string, error)
	// Exists says whether object key exists.
	Exists(ctx context.Context, key string) (bool, error)
	// Put writes what r yields, of unknown size, as object key; the
	// store shows it only once complete.
	Put(ctx context.Context, key string, r io.Reader) error
}

// Results writes a run's results into its namespace's data. The agent's
// object store implements it, so that results are held to the bounds of
// the object API's PUTs: the namespace's quota on the node, the node's free
// space and the object size limit.
type Results interface {
	// Write writes what r yields as the object name of namespace ns, whose
	// directory root is, through the temporary name tmp (durable.Create,
	// with hooks, whose Rename is the store's own), within the store's
	// bounds. A refusal carries its status (507, 413) and names its limit;
	// a failed write leaves no temporary file.
	Write(root *os.Root, ns, name, tmp string, r io.Reader, buf []byte, hooks durable.Hooks) error
	// Place runs rename, which puts a file of the run's own of size bytes
	// (its error manifest, written in its hidden journal directory) in
	// place as name of ns, within ns's quota on the node, and counts it
	// there; past the quota it refuses with 507 and does not rename.
	Place(root *os.Root, ns, name string, size int64, rename func() error) error
}

// Config configures a node's Runs.
type Config struct {
	// Node is the node the runs are on, reported in their status.
	Node string
	// Root is the node's data directory (package dataroot).
	Root         *os.Root
	Transformers Transformers
	// Results writes the runs' results; required.
	Results Results
	// Stores opens the stores of runs whose source is an ObjectStore; nil
	// refuses such runs.
	Stores Stores
	// MaxRuns bounds the runs going on at once on the node, and MaxWorkers
	// their workers together; a run past either is refused with 429.
	MaxRuns, MaxWorkers int
	Panics              *panics.Reporter
	Log                 *slog.Logger
}

// keptRuns is how many runs an agent remembers; the oldest ended ones are
// forgotten first. A forgotten run answers 404, and the manager's next PUT
// finds its journal.
const keptRuns = 64

// Runs holds a node's runs, the latest attempt of each by key.
type Runs struct {
	cfg    Config
	limits limits

	// starting serializes Starts, which check and take destinations.
	starting sync.Mutex

	mu    sync.Mutex
	runs  map[Key]*Run
	order []Key // oldest first
}

// New returns the runs of a node, none yet.
func New(cfg Config) *Runs {
	return &Runs{cfg: cfg, limits: newLimits(cfg), runs: map[Key]*Run{}}
}

// Get returns the latest attempt of run k, or nil when the node holds none.
func (rs *Runs) Get(k Key) *Run {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.runs[k]
}

// put makes r the run of its key, forgetting the oldest ended runs past
// keptRuns.
func (rs *Runs) put(r *Run) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.runs[r.key]; !ok {
		rs.order = append(rs.order, r.key)
	}
	rs.runs[r.key] = r
	for i := 0; len(rs.order) > keptRuns && i < len(rs.order); {
		if k := rs.order[i]; rs.runs[k].ended() {
			delete(rs.runs, k)
			rs.order = append(rs.order[:i], rs.order[i+1:]...)
			continue
		}
		i++
	}
}

// Start returns the attempt of key that plan's PUT stands for: the one
// going on, a share that ended, or a new attempt that resumes from the
// journal.
func (rs *Runs) Start(ctx context.Context, key Key, plan Plan) (*Run, error) {
	uid := plan.spec.UID
	// A run being suspended resumes once its workers let go.
	if cur := rs.Get(key); cur != nil && cur.plan.spec.UID == uid && cur.stopped.Load() != nil {
		select {
		case <-cur.done:
		case <-ctx.Done():
			return nil, status.With(http.StatusServiceUnavailable, fmt.Errorf("run %s is still stopping; retry", key))
		}
	}
	rs.starting.Lock()
	defer rs.starting.Unlock()
	if cur := rs.Get(key); cur != nil {
		switch {
		case cur.plan.spec.UID != uid && !cur.ended():
			return nil, status.With(http.StatusConflict, fmt.Errorf(
				"run %s of uid %s is going on on this node; DELETE it and wait for it to stop before starting uid %s", key, cur.plan.spec.UID, uid))
		case cur.plan.spec.UID == uid && !cur.ended():
			return cur, nil
		case cur.plan.spec.UID == uid && cur.Status().Phase != etlv1alpha1.RunSuspended:
			return cur, nil // its share ended
		}
	}
	var pipeline Pipeline = copier{dataroot.Of(rs.cfg.Root, key.Namespace, "")}
	if len(plan.stages) > 0 {
		var err error
		if pipeline, err = rs.cfg.Transformers.Resolve(ctx, key.Namespace, plan.stages); err != nil {
			return nil, err
		}
	}
	if err := rs.limits.admit(key.Namespace, plan.spec.Workers); err != nil {
		return nil, err
	}
	run, err := rs.newRun(key, plan, pipeline)
	if err != nil {
		rs.limits.release(key.Namespace, plan.spec.Workers)
		return nil, err
	}
	rs.put(run)
	rs.cfg.Panics.GoSafe("node run", run.execute)
	return run, nil
}

// Close abandons every run, as the agent closes, and waits until their
// workers let go of the destinations: a run's objects in flight are
// cancelled and redone when the run resumes.
func (rs *Runs) Close() {
	rs.mu.Lock()
	runs := make([]*Run, 0, len(rs.runs))
	for _, r := range rs.runs {
		runs = append(runs, r)
	}
	rs.mu.Unlock()
	for _, r := range runs {
		r.Abandon()
	}
	for _, r := range runs {
		<-r.done
	}
}

// limits are the node-wide caps on offline runs: each run holds goroutines,
// buffers and transformer connections, so without a cap a few runs could
// take the whole node. Both are shared fairly among the namespaces that
// want them (package fairshare).
type limits struct {
	runs, workers *fairshare.Cap
}

func newLimits(cfg Config) limits {
	return limits{
		runs:    &fairshare.Cap{What: "concurrent offline runs", Flag: "--max-offline-runs", Max: cfg.MaxRuns},
		workers: &fairshare.Cap{What: "offline workers", Flag: "--max-offline-workers", Hint: "ask for fewer workers", Max: cfg.MaxWorkers},
	}
}

// admit takes a run's share of namespace ns (one run, its workers), or
// fails with 429; release gives it back.
func (l limits) admit(ns string, workers int) error {
	if err := l.runs.Admit(ns, 1); err != nil {
		return err
	}
	if err := l.workers.Admit(ns, workers); err != nil {
		l.runs.Release(ns, 1)
		return err
	}
	return nil
}

func (l limits) release(ns string, workers int) {
	l.runs.Release(ns, 1)
	l.workers.Release(ns, workers)
}

// copier is the pipeline of a run without one: each object goes to the
// destination as it is, a file of the namespace's data or the bytes open
// fetches.
type copier struct{ data *dataroot.Namespace }

func (c copier) Transform(ctx context.Context, object, _ string, open Opener, write func(io.Reader) error) error {
	var body io.ReadCloser
	var err error
	if open != nil {
		body, _, err = open.Open(ctx)
	} else {
		body, _, err = c.data.Open(object)
	}
	if err != nil {
		return err
	}
	defer body.Close()
	return write(body)
}
