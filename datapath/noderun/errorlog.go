package noderun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sync"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/durable"
)

// errorLog streams every failed object of a run's attempt to a hidden file
// in its journal directory as it fails, so that the complete list never has
// to be held in memory; when the run's share ends it becomes the error
// manifest (wire.ErrorManifest) in the destination, in place at once.
type errorLog struct {
	root     *os.Root
	ns       string
	results  Results
	tmp, dst string
	// deliver puts the manifest, complete at tmp, in its place: place,
	// or an upload to an ObjectStore.
	deliver func() error

	mu  sync.Mutex
	f   *os.File
	n   int
	err error
}

const errorLogFile = "errors.jsonl"

// openErrorLog starts the error log of an attempt of run uid of namespace
// ns, whose journal is in journalDir: the failures of an earlier attempt are
// redone, so their records go.
func openErrorLog(root *os.Root, ns string, results Results, journalDir, dst, uid string) (*errorLog, error) {
	l := &errorLog{root: root, ns: ns, results: results, tmp: path.Join(journalDir, errorLogFile), dst: path.Join(dst, wire.ErrorManifest(uid))}
	l.deliver = l.place
	var err error
	l.f, err = root.OpenFile(l.tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	return l, err
}

// add records one failed object; the first write error is kept for finish.
func (l *errorLog) add(e etlv1alpha1.ObjectError) {
	line, err := json.Marshal(e.Truncated())
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		_, err = l.f.Write(append(line, '\n'))
	}
	l.n++
	l.err = errors.Join(l.err, err)
}

// place renames the manifest into the destination, within the namespace's
// quota on the node (Results.Place), durably.
func (l *errorLog) place() error {
	fi, err := l.root.Stat(l.tmp)
	if err != nil {
		return err
	}
	if err := l.results.Place(l.root, l.ns, l.dst, fi.Size(), func() error { return l.root.Rename(l.tmp, l.dst) }); err != nil {
		return err
	}
	return durable.SyncDir(l.root, path.Dir(l.dst))
}

// uploadTo makes the manifest go to key of store when the share ends.
func (l *errorLog) uploadTo(ctx context.Context, store Store, key string) {
	l.dst = key
	l.deliver = func() error {
		f, err := l.root.Open(l.tmp)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := store.Put(ctx, key, f); err != nil {
			return err
		}
		return l.root.Remove(l.tmp)
	}
}

// finish puts the manifest in place when there were failures and reports
// whether it did; a share without failures has no manifest.
func (l *errorLog) finish() (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.err
	if err == nil && l.n > 0 {
		err = l.f.Sync()
	}
	err = errors.Join(err, l.f.Close())
	if err == nil && l.n > 0 {
		err = l.deliver()
	}
	if err == nil && l.n == 0 {
		err = l.root.Remove(l.tmp)
	}
	if err != nil {
		// A manifest refused (over the quota) or half written is not
		// kept, even hidden: the next attempt starts its own.
		_ = l.root.Remove(l.tmp)
		return false, fmt.Errorf("writing the error manifest %s: %w", l.dst, err)
	}
	return l.n > 0, nil
}

// abandon closes the log of an attempt that stopped before its share ended;
// the next attempt starts its own.
func (l *errorLog) abandon() {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.f.Close() // nothing of it is kept
}
