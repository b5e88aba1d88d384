package noderun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/dataroot"
	"github.com/mlkube/mlkube/datapath/internal/panics"
	"github.com/mlkube/mlkube/datapath/internal/placement"
	"github.com/mlkube/mlkube/datapath/internal/recent"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/durable"
	"github.com/mlkube/mlkube/internal/status"
)

// Run is one attempt at this node's share of a TransformRun: the
// objects of the source go through the pipeline into the destination,
// Workers at a time, fed by the walk of the source as they go. An attempt
// ends when its share is done (Succeeded, Failed) or it is stopped
// (Suspended); the next attempt of the same UID resumes from the journal.
type Run struct {
	rs       *Runs
	key      Key
	plan     Plan
	pipeline Pipeline
	started  time.Time
	// root is the namespace's directory, open for the attempt; files are
	// the attempt's journal, error log and destination lock, nil in a dry
	// run.
	root *os.Root
	data *dataroot.Namespace
	files
	// src and dst are the stores of a source and a destination in one,
	// open once the feeding began; nil for the namespace's data on this
	// node.
	src, dst Store

	// ctx ends when the agent closes: objects in flight are abandoned
	// (and redone by the next attempt). stop ends the feeding of objects:
	// the workers finish the ones they hold.
	ctx      context.Context
	cancel   context.CancelFunc
	stop     chan struct{}
	stopOnce sync.Once
	// stopped says why the feeding stopped: suspended or failed.
	stopped atomic.Pointer[stopCause]

	counts runCounters
	// listed is set once the feeding handed every object of the share to
	// the work queue: counts' planned objects are final.
	listed atomic.Bool
	recent recent.Errors

	// done is closed when the attempt has ended.
	done chan struct{}

	mu       sync.Mutex
	phase    etlv1alpha1.RunPhase
	message  string
	finished *time.Time
}

// files are what an attempt keeps open in its destination.
type files struct {
	journal *journal
	errs    *errorLog
	lock    *os.File
}

// runCounters are the RunCounts of an attempt, updated by the workers.
type runCounters struct {
	plannedObjects, plannedBytes, doneObjects, doneBytes, failedObjects, skippedObjects atomic.Int64
}

func (c *runCounters) snapshot() etlv1alpha1.RunCounts {
	return etlv1alpha1.RunCounts{
		PlannedObjects: c.plannedObjects.Load(), PlannedBytes: c.plannedBytes.Load(),
		DoneObjects: c.doneObjects.Load(), DoneBytes: c.doneBytes.Load(),
		FailedObjects: c.failedObjects.Load(), SkippedObjects: c.skippedObjects.Load(),
	}
}

type stopCause struct {
	phase   etlv1alpha1.RunPhase
	message string
}

// The status's recent errors are recent.Errors'.
var _ [etlv1alpha1.MaxRunErrors - etlv1alpha1.MaxObjectErrors]struct{}
var _ [etlv1alpha1.MaxObjectErrors - etlv1alpha1.MaxRunErrors]struct{}

// item is one object of the source and the name of its result.
type item struct {
	object, result string
	size           int64
}

// newRun opens what an attempt needs on the file system: unless it is a
// dry run, it takes the destination, checks it against the source, opens
// the journal and sweeps the temporary files an earlier attempt left.
func (rs *Runs) newRun(key Key, plan Plan, pipeline Pipeline) (*Run, error) {
	// A run hands objects to the agent by name, never as fqn paths.
	data := dataroot.Of(rs.cfg.Root, key.Namespace, "")
	r := &Run{
		rs: rs, key: key, plan: plan, pipeline: pipeline, started: time.Now(), data: data,
		stop: make(chan struct{}), done: make(chan struct{}), phase: etlv1alpha1.RunRunning,
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if plan.store != nil || plan.dstStore != nil {
		// Objects of a store come to this node, and a store's journal is
		// kept on it, whether or not the namespace has data on it yet.
		if err := rs.cfg.Root.Mkdir(key.Namespace, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, durable.StorageError(key.Namespace, err)
		}
	}
	root, err := data.Enter()
	if status.Of(err) == http.StatusNotFound {
		// The namespace has no data on the node: nothing to transform.
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	r.root = root
	if plan.spec.DryRun {
		return r, nil
	}
	if err := r.openFiles(); err != nil {
		r.closeFiles()
		root.Close()
		return nil, err
	}
	return r, nil
}

func (r *Run) openFiles() error {
	uid, dst := r.plan.spec.UID, r.plan.dst
	if r.plan.dstStore != nil {
		return r.openStoreFiles()
	}
	if r.plan.srcPrefix != "" && r.plan.store == nil {
		if err := checkOverlap(r.root, r.plan.srcPrefix, dst); err != nil {
			return err
		}
	}
	var err error
	if r.lock, err = lockDestination(r.root, dst, uid); err != nil {
		return err
	}
	dir := wire.JournalDir(dst, uid)
	j, resumed, err := openJournal(r.root, dir)
	if err != nil {
		return durable.StorageError(dir, err)
	}
	r.journal = j
	if resumed {
		if err := durable.SweepTemps(r.root, dst, uid); err != nil {
			return durable.StorageError(dst, fmt.Errorf("sweeping the temporary files of an earlier attempt: %w", err))
		}
	}
	if r.errs, err = openErrorLog(r.root, r.key.Namespace, r.rs.cfg.Results, dir, dst, uid); err != nil {
		return durable.StorageError(dir, err)
	}
	return nil
}

// openStoreFiles opens the journal and the error log of a share whose
// destination is an ObjectStore, in the namespace's data on this node
// (wire.StoreJournalDir). Nothing is locked: results go up whole, each
// with one PUT, and a store has no directory to share.
func (r *Run) openStoreFiles() error {
	dir := wire.StoreJournalDir(r.plan.spec.UID)
	j, _, err := openJournal(r.root, dir)
	if err != nil {
		return durable.StorageError(dir, err)
	}
	r.journal = j
	if r.errs, err = openErrorLog(r.root, r.key.Namespace, r.rs.cfg.Results, dir, r.plan.dst, r.plan.spec.UID); err != nil {
		return durable.StorageError(dir, err)
	}
	return nil
}

// openStores opens the stores of the source and the destination: an
// error says why one cannot be used (keys refused, no bucket, endpoint
// unreachable) and ends the share.
func (r *Run) openStores() error {
	var err error
	if p := r.plan.store; p != nil {
		if r.src, err = r.rs.cfg.Stores.Open(r.ctx, r.key.Namespace, *p); err != nil {
			return &storeError{"the source", err}
		}
	}
	if p := r.plan.dstStore; p != nil {
		if r.dst, err = r.rs.cfg.Stores.Open(r.ctx, r.key.Namespace, *p); err != nil {
			return &storeError{"the destination", err}
		}
		if r.errs != nil {
			r.errs.uploadTo(r.ctx, r.dst, r.plan.dst+"/"+wire.StoreErrorManifest(r.plan.spec.UID, r.rs.cfg.Node))
		}
	}
	return nil
}

// storeError is a store of the run that cannot be used.
type storeError struct {
	what string
	err  error
}

func (e *storeError) Error() string { return e.what + ": " + status.Message(e.err) }
func (e *storeError) Unwrap() error { return e.err }

func (r *Run) closeFiles() {
	if r.journal != nil {
		if err := r.journal.close(); err != nil {
			r.rs.cfg.Log.Error("closing a run's journal: its last objects will be redone", "run", r.key, "error", err)
		}
	}
	if r.lock != nil {
		r.lock.Close() // releases the destination
	}
}

// execute runs the attempt to its end; the caller has taken its share of
// the node's limits, which it gives back.
func (r *Run) execute() {
	defer func() {
		// After a panic, which GoSafe reports: the run must not stay
		// Running for ever.
		if !r.ended() {
			r.end(etlv1alpha1.RunFailed, panics.ErrInternal.Error())
		}
	}()
	workers := r.plan.spec.Workers
	if r.plan.spec.DryRun {
		workers = 0
	}
	// The queue runs up to Lookahead objects ahead of the workers: the
	// listing of a share that fits in it ends at once, its plan is known
	// and the manager can tell from the rate when it should end.
	work := make(chan item, max(workers, Lookahead))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		r.rs.cfg.Panics.GoSafe("run worker", func() {
			defer wg.Done()
			buf := bufpool.Objects.Get()
			defer bufpool.Objects.Put(buf)
			for it := range work {
				r.process(it, *buf)
			}
		})
	}
	err := r.feed(func(it item) bool {
		r.counts.plannedObjects.Add(1)
		r.counts.plannedBytes.Add(it.size)
		if r.plan.spec.DryRun {
			return true
		}
		select {
		case work <- it:
			return true
		case <-r.stop:
			return false
		case <-r.ctx.Done():
			return false
		}
	})
	r.listed.Store(err == nil)
	close(work)
	wg.Wait()
	r.finish(err)
}

// Lookahead is how many objects the feeding queues ahead of the workers:
// a few hundred KiB of names.
const Lookahead = 1024

// feed calls send with each object of the source that exists on this node,
// in order, until send returns false. Objects of a list or template that
// this node does not have are not of its share.
func (r *Run) feed(send func(item) bool) error {
	if r.root == nil {
		return nil
	}
	// Before the first object reaches a worker.
	if err := r.openStores(); err != nil {
		return err
	}
	if r.plan.store != nil {
		return r.feedStore(send)
	}
	spec := r.plan.spec
	if r.plan.srcPrefix != "" {
		err := r.data.Walk(r.plan.srcPrefix, func(object string, e fs.DirEntry) error {
			result, ok := wire.ResultName(spec.Source, spec.Destination, object)
			if !ok {
				return nil
			}
			// A file gone since it was listed is no longer of the run.
			fi, err := e.Info()
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if !send(item{object: object, result: result, size: fi.Size()}) {
				return fs.SkipAll
			}
			return nil
		})
		if status.Of(err) == http.StatusNotFound {
			return nil // no source on this node: nothing to transform
		}
		return err
	}
	for object := range r.plan.objects.All() {
		result, ok := wire.ResultName(spec.Source, spec.Destination, object)
		if !ok {
			continue
		}
		fi, err := r.root.Stat(object)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if !send(item{object: object, result: result, size: fi.Size()}) {
			return nil
		}
	}
	return nil
}

// feedStore calls send with each object of the source's store in this
// node's share: those whose results the node tier places on this node
// among the run's nodes, so that later reads of a result find it where they
// look first, and the nodes split the objects without talking to each
// other.
func (r *Run) feedStore(send func(item) bool) error {
	src, spec := r.src, r.plan.spec
	nodes := placement.NewNodes(spec.Nodes)
	mine := func(object string, size int64) bool {
		result, ok := wire.ResultName(spec.Source, spec.Destination, object)
		if !ok || nodes.First(r.key.Namespace, result) != r.rs.cfg.Node {
			return true
		}
		return send(item{object: object, result: result, size: size})
	}
	if r.plan.srcPrefix != "" {
		err := src.List(r.ctx, r.plan.srcPrefix+"/", etlv1alpha1.MaxRunObjects, func(key string, size int64) error {
			if !mine(key, size) {
				return errStopFeeding
			}
			return nil
		})
		if errors.Is(err, errStopFeeding) || r.ctx.Err() != nil {
			return nil
		}
		return err
	}
	for object := range r.plan.objects.All() {
		if !mine(object, 0) {
			return nil
		}
	}
	return nil
}

// errStopFeeding ends a store's listing when the feeding stopped.
var errStopFeeding = errors.New("the feeding stopped")

// process transforms one object unless the feeding stopped, the journal
// has it, or its result exists and may not be replaced.
func (r *Run) process(it item, buf []byte) {
	if r.isStopped() {
		return
	}
	if r.src != nil && r.dst == nil {
		// A key of a store may name no object of the node tier.
		if err := checkResult(it.result); err != nil {
			r.failed(it.object, status.BadRequest(fmt.Errorf("its result's name: %w; rename the object in the store, or leave it out of the source", err)))
			return
		}
	}
	if r.journal.has(it.object) {
		r.counts.skippedObjects.Add(1)
		return
	}
	// A check writes no result, so an existing one is no conflict.
	if !r.plan.spec.Overwrite && !r.plan.spec.Check && !r.journal.mayHaveWritten(it.object) {
		if err := r.resultFree(it.result); err != nil {
			r.failed(it.object, err)
			return
		}
	}
	err := r.transform(it, buf)
	switch {
	case err == nil:
		r.counts.doneObjects.Add(1)
		r.counts.doneBytes.Add(it.size)
	case r.ctx.Err() == nil:
		r.failed(it.object, err)
	}
	// Otherwise the agent is closing: the object is redone by the next
	// attempt.
}

// resultFree refuses a result that exists in the destination (409), or
// that cannot be looked for.
func (r *Run) resultFree(result string) error {
	exists := false
	if r.dst != nil {
		var err error
		if exists, err = r.dst.Exists(r.ctx, result); err != nil {
			return err
		}
	} else {
		_, err := r.root.Lstat(result)
		exists = err == nil
	}
	if exists {
		return status.With(http.StatusConflict, fmt.Errorf(
			"destination object %q exists; set overwrite to replace it, or choose another destination", result))
	}
	return nil
}

// transform runs one object through the pipeline into its result, or for
// a check, through the pipeline to its end.
func (r *Run) transform(it item, buf []byte) error {
	sink := r.write
	if r.plan.spec.Check {
		sink = r.discard
	}
	var open Opener
	if r.src != nil {
		size := it.size
		if r.plan.srcPrefix == "" {
			size = -1 // named by a list or template: not listed, so not known
		}
		open = storeObject{r.src, it.object, size}
	}
	return r.pipeline.Transform(r.ctx, it.object, r.plan.spec.Args, open, func(result io.Reader) error { return sink(it, result, buf) })
}

// storeObject is an object of a run's source store, of its listed size.
type storeObject struct {
	store Store
	key   string
	size  int64
}

func (o storeObject) Open(ctx context.Context) (io.ReadCloser, int64, error) {
	return o.store.Get(ctx, o.key)
}

func (o storeObject) Presign(ctx context.Context, d time.Duration) (string, int64, error) {
	u, err := o.store.Presign(ctx, o.key, d)
	return u, o.size, err
}

// discard reads a check's result to its end, which is when a transformer
// that fails late reports it, and journals the object as checked: a resumed
// check does not read it again. Nothing is renamed into the destination, so
// the journal needs no intent record.
func (r *Run) discard(it item, result io.Reader, buf []byte) error {
	if _, err := io.CopyBuffer(io.Discard, result, buf); err != nil {
		return err
	}
	if err := r.journal.complete(it.object, r.resultDir(it)); err != nil {
		return durable.StorageError(r.plan.dst, err)
	}
	return nil
}

// resultDir is the directory a result's entry is in, synced before the
// journal says the object is done; a store's results have none on the
// node, and the journal's own is synced instead.
func (r *Run) resultDir(it item) string {
	if r.dst != nil {
		return r.journal.dir
	}
	return path.Dir(it.result)
}

// write puts result in place as it.result, durably and within the
// namespace's bounds on the node (Config.Results), and journals it.
func (r *Run) write(it item, result io.Reader, buf []byte) error {
	if r.dst != nil {
		return r.upload(it, result)
	}
	tmp := durable.TempName(it.result, r.plan.spec.UID)
	hooks := durable.Hooks{BeforeRename: func() error { return r.journal.intend(it.object) }}
	if err := r.rs.cfg.Results.Write(r.root, r.key.Namespace, it.result, tmp, result, buf, hooks); err != nil {
		return err
	}
	if err := r.journal.complete(it.object, r.resultDir(it)); err != nil {
		return durable.StorageError(it.result, err)
	}
	return nil
}

// upload puts result in the destination's store as it.result, which the
// store shows only once complete, and journals it. A result that fails
// while it is read fails with its own error, not the store's.
func (r *Run) upload(it item, result io.Reader) error {
	if err := r.journal.intend(it.object); err != nil {
		return durable.StorageError(r.journal.dir, err)
	}
	src := &readFailure{r: result}
	if err := r.dst.Put(r.ctx, it.result, src); err != nil {
		if src.err != nil {
			return src.err
		}
		return err
	}
	if err := r.journal.complete(it.object, r.journal.dir); err != nil {
		return durable.StorageError(r.journal.dir, err)
	}
	return nil
}

// readFailure keeps the error a reader failed with.
type readFailure struct {
	r   io.Reader
	err error
}

func (f *readFailure) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		f.err = err
	}
	return n, err
}

// failed counts a failed object and, without continueOnError, stops the
// feeding: the objects in flight finish.
func (r *Run) failed(object string, err error) {
	r.counts.failedObjects.Add(1)
	e := etlv1alpha1.ObjectError{
		Object: object, Message: status.Message(err), StatusCode: int32(status.Of(err)), Node: r.rs.cfg.Node, Time: metav1.Now(),
	}
	r.recent.Add(e)
	r.errs.add(e)
	if !r.plan.spec.ContinueOnError {
		r.stopFeeding(etlv1alpha1.RunFailed, fmt.Sprintf("stopped after object %q failed: %s", object, status.Message(err)))
	}
}

// stopFeeding stops the attempt for cause; the first cause stands.
func (r *Run) stopFeeding(phase etlv1alpha1.RunPhase, message string) {
	r.stopOnce.Do(func() {
		r.stopped.Store(&stopCause{phase: phase, message: message})
		close(r.stop)
	})
}

func (r *Run) isStopped() bool { return r.stopped.Load() != nil || r.ctx.Err() != nil }

// Suspend stops the attempt after the objects in flight (the manager's
// DELETE).
func (r *Run) Suspend() {
	r.stopFeeding(etlv1alpha1.RunSuspended, "suspended: the objects not done yet are transformed when the run resumes")
}

// finish ends the attempt: the journal is flushed, and when the share
// ended (not suspended, the agent not closing) the error manifest is put in
// place.
func (r *Run) finish(feedErr error) {
	phase, message := etlv1alpha1.RunSucceeded, ""
	cause := r.stopped.Load()
	switch {
	case r.ctx.Err() != nil:
		phase, message = etlv1alpha1.RunSuspended, "the node agent stopped; the run resumes where it stopped when it is started again"
	case cause != nil:
		phase, message = cause.phase, cause.message
	case errors.As(feedErr, new(*storeError)):
		phase, message = etlv1alpha1.RunFailed, feedErr.Error()
	case feedErr != nil:
		phase, message = etlv1alpha1.RunFailed, "listing the source: "+status.Message(feedErr)
	case r.counts.failedObjects.Load() > 0:
		phase, message = etlv1alpha1.RunFailed, "some objects failed; see errors and the error manifest"
	}
	if r.errs != nil {
		if phase == etlv1alpha1.RunSuspended {
			r.errs.abandon()
		} else if wrote, err := r.errs.finish(); err != nil {
			// What failed before stays said: the manifest would have
			// listed it.
			phase, message = etlv1alpha1.RunFailed, strings.TrimPrefix(message+"; "+status.Message(err), "; ")
		} else if wrote {
			message += "; every failed object is listed in " + wire.ErrorManifest(r.plan.spec.UID)
		}
	}
	r.closeFiles()
	if r.root != nil {
		r.root.Close()
	}
	r.end(phase, message)
}

func (r *Run) end(phase etlv1alpha1.RunPhase, message string) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phase, r.message, r.finished = phase, message, &now
	// The run is remembered for its status (keptRuns of them), never for its
	// source's names.
	r.plan.dropSource()
	r.cancel()
	r.rs.limits.release(r.key.Namespace, r.plan.spec.Workers)
	close(r.done)
}

// Abandon ends the attempt at once, as the agent's closing does: its objects
// in flight are cancelled and redone when the run resumes.
func (r *Run) Abandon() { r.cancel() }

// Done is closed when the attempt has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// UID is the UID of the TransformRun the attempt is of.
func (r *Run) UID() string { return r.plan.spec.UID }

// ended reports whether the attempt has ended.
func (r *Run) ended() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Status returns the attempt's NodeRunStatus now.
func (r *Run) Status() wire.NodeRunStatus {
	s := wire.NodeRunStatus{
		UID: r.plan.spec.UID, Node: r.rs.cfg.Node, RunCounts: r.counts.snapshot(), Listed: r.listed.Load(),
		Errors: r.recent.Snapshot(), Started: r.started,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s.Phase, s.Message, s.Finished = r.phase, r.message, r.finished
	if s.Phase == etlv1alpha1.RunRunning && r.stopped.Load() != nil {
		s.Message = "stopping: the workers finish their current objects"
	}
	return s
}
