package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mlkube/mlkube/api/wire"
)

// offlineRun is one offline run on this node: every object under Src goes
// through the pipeline into Dst, Workers at a time.
type offlineRun struct {
	a *Agent
	// ns is the run's namespace, whose data it reads and writes.
	ns      string
	data    *dataRoot
	status  wire.RunStatus // the fixed part; counters and state are below
	targets []Target
	cancel  context.CancelCauseFunc
	total   atomic.Int64
	record  transformRecord

	// done is closed when the run has ended.
	done chan struct{}

	mu       sync.Mutex
	state    wire.RunState
	message  string
	planned  []wire.RunItem
	finished *time.Time
}

// errAborted is the cause of a run stopped by DELETE.
var errAborted = errors.New("aborted by request")

// startOffline starts a run of a validated req in the background.
func (a *Agent) startOffline(p transformPath, targets []Target, req wire.RunRequest) *offlineRun {
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &offlineRun{
		a: a, ns: p.namespace, data: a.data(p.namespace),
		status: wire.RunStatus{
			ID: newRunID(), Transform: p.namespaceName(), Node: a.opts.Node, RunRequest: req, Started: time.Now(),
		},
		targets: targets,
		cancel:  cancel,
		state:   wire.RunRunning,
		done:    make(chan struct{}),
	}
	a.panics.goSafe("offline run", func() { r.execute(ctx) })
	return r
}

// ended reports whether the run has ended.
func (r *offlineRun) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func newRunID() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (r *offlineRun) execute(ctx context.Context) {
	defer func() {
		// After a panic, which goSafe reports: the run must not stay
		// Running for ever.
		if !r.ended() {
			r.end(wire.RunFailed, errInternal.Error())
		}
	}()
	req := r.status.RunRequest
	if req.DryRun {
		r.plan()
		return
	}
	work := make(chan string, req.Workers)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range req.Workers {
		wg.Add(1)
		r.a.panics.goSafe("offline worker", func() {
			defer wg.Done()
			buf := getBuffer()
			defer putBuffer(buf)
			for object := range work {
				if ctx.Err() != nil {
					continue // stopped: the rest is not attempted
				}
				if err := r.transform(ctx, object, *buf); err != nil {
					failed.Store(true)
					if !req.ContinueOnError {
						r.cancel(fmt.Errorf("stopped after object %q failed: %s", object, messageOf(err)))
					}
				}
			}
		})
	}
	// The walk feeds the workers as it goes, a few objects ahead of them.
	err := r.data.walk(req.Src, func(object string) error {
		select {
		case work <- object:
			r.total.Add(1)
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	if err != nil && ctx.Err() == nil {
		r.cancel(errors.New(messageOf(err)))
	}
	close(work)
	wg.Wait()
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errAborted):
		r.end(wire.RunAborted, cause.Error())
	case cause != nil:
		r.end(wire.RunFailed, cause.Error())
	case failed.Load():
		r.end(wire.RunFailed, "some objects failed; see errors")
	default:
		r.end(wire.RunSucceeded, "")
	}
}

// plan lists what a dry run would do: every object counts in Total, the
// first wire.RunMaxPlanned are planned.
func (r *offlineRun) plan() {
	req := r.status.RunRequest
	err := r.data.walk(req.Src, func(object string) error {
		if r.total.Add(1) <= wire.RunMaxPlanned {
			r.mu.Lock()
			r.planned = append(r.planned, wire.RunItem{Object: object, Dst: destination(req.Src, req.Dst, object)})
			r.mu.Unlock()
		}
		return nil
	})
	if err != nil {
		r.end(wire.RunFailed, messageOf(err))
		return
	}
	r.end(wire.RunSucceeded, "")
}

// transform runs one object through the pipeline into its destination.
func (r *offlineRun) transform(ctx context.Context, object string, buf []byte) error {
	o := &objectRun{a: r.a, object: object, start: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, objectTimeoutOf(r.targets))
	defer cancel()
	var err error
	// An object that panics fails alone: its worker goes on with the next.
	if perr := r.a.panics.call("offline object", func() { err = r.write(ctx, o, buf) }); perr != nil {
		err = withStatus(http.StatusInternalServerError, perr)
	}
	code, msg := 0, ""
	if err != nil {
		err = o.classify(err)
		code, msg = statusOf(err), messageOf(err)
	}
	o.finish(code, msg)
	in, out := o.sizes()
	r.record.observe(r.a.opts.Node, in, out, object, code, msg, o.start)
	return err
}

// write runs o's object through the pipeline and writes the result.
func (r *offlineRun) write(ctx context.Context, o *objectRun, buf []byte) error {
	req := r.status.RunRequest
	in, err := r.a.localInput(r.data, o.object, req.Args)
	if err != nil {
		o.stages = append(o.stages, stageRun{t: r.targets[0]})
		return err
	}
	o.inSize = in.size
	result, _, err := o.run(ctx, r.targets, in)
	if err != nil {
		return err
	}
	defer result.Close()
	dst := destination(req.Src, req.Dst, o.object)
	return r.data.create(dst, tempName(dst, r.status.ID), result, buf)
}

func (r *offlineRun) end(state wire.RunState, message string) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state, r.message, r.finished = state, message, &now
	r.cancel(nil)
	r.a.limits.releaseRun(r.status.Workers)
	close(r.done)
}

// snapshot returns the run's Status now.
func (r *offlineRun) snapshot() wire.RunStatus {
	s := r.status
	s.Total = r.total.Load()
	t := r.record.snapshot()
	s.Counters, s.Errors = t.Counters, t.Errors
	r.mu.Lock()
	defer r.mu.Unlock()
	s.State, s.Message, s.Finished = r.state, r.message, r.finished
	s.Planned = append([]wire.RunItem(nil), r.planned...)
	return s
}

// destination is the name under dst of object, which is under src.
func destination(src, dst, object string) string {
	return dst + "/" + strings.TrimPrefix(object, src+"/")
}

// tempName is where the result for final is written until it is complete:
// beside it, so that the rename stays on one file system, and hidden.
func tempName(final, runID string) string {
	dir, base := path.Split(final)
	return dir + "." + base + "." + runID + ".tmp"
}
