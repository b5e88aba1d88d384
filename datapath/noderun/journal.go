package noderun

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/mlkube/mlkube/internal/durable"
	"io/fs"
	"os"
	"path"
	"strconv"
	"sync"
	"time"
)

// journal is a run's append-only record, on one node, of the objects whose
// results are durably in place, kept in the destination under
// wire.JournalDir: a run resumed after its agent restarted, or after a
// suspension, skips them and never writes an object twice.
//
// Two records, one a line, each with the source object's name quoted
// (strconv.Quote, so any name fits on one line):
//
//	i "raw/a.jpg"   about to rename the result into place (written at once, not fsynced)
//	d "raw/a.jpg"   the result is durably in place (fsynced in batches)
//
// A "d" record is written only after the fsync of the result's directory,
// which makes its rename durable: batches share one directory fsync and one
// journal fsync instead of paying two per object. An "i" without its "d"
// marks a result this run may have renamed just before a crash: on resume
// such an object is redone and its result replaced, while a result that
// exists without it is someone else's and refused without overwrite.
//
// The journal holds in memory the names of the objects an earlier attempt
// completed (read when it resumes), never the ones its own attempt
// completes: at most etlv1alpha1.MaxRunObjects for list sources; for prefix
// sources what the earlier attempts did of what the node stores.
type journal struct {
	// root is the namespace's directory; dir the journal's, in it.
	root *os.Root
	dir  string

	mu   sync.Mutex
	f    *os.File
	done map[string]struct{}
	// intended holds the objects with an "i" record and no "d" one, read
	// from an earlier attempt.
	intended map[string]struct{}
	// pending are completed objects whose "d" records wait for the next
	// flush, and dirs their results' directories to fsync first.
	pending []string
	dirs    map[string]struct{}
	since   time.Time
}

const (
	journalFile = "journal"
	// journalBatch and journalDelay bound what a flush waits for: a crash
	// redoes at most that many objects, or a second's worth.
	journalBatch = 256
	journalDelay = time.Second
	// maxJournalLine bounds one record: a quoted name of wire.MaxObjectName
	// bytes is at most 4 times as long.
	maxJournalLine = 8 << 10
)

// openJournal opens (creating it, or reading it when an earlier attempt
// left it) the journal in dir of root, and reports whether it existed.
func openJournal(root *os.Root, dir string) (*journal, bool, error) {
	j := &journal{root: root, dir: dir, done: map[string]struct{}{}, intended: map[string]struct{}{}, dirs: map[string]struct{}{}}
	_, err := root.Stat(dir)
	existed := err == nil
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return nil, false, err
	}
	name := path.Join(dir, journalFile)
	if err := j.load(name); err != nil {
		return nil, false, err
	}
	if j.f, err = root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
		return nil, false, err
	}
	if !existed {
		// The journal's own directory entry must outlive a crash, or its
		// records would go with it.
		err = errors.Join(durable.SyncDir(root, dir), durable.SyncDir(root, path.Dir(dir)))
	}
	return j, existed, err
}

// load reads the records of an earlier attempt. A line that does not parse
// is the last one, cut by a crash mid-write: its object is redone.
func (j *journal) load(name string) error {
	f, err := j.root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 4096), maxJournalLine)
	for s.Scan() {
		kind, object, ok := parseJournalLine(s.Text())
		if !ok {
			continue
		}
		if kind == 'd' {
			j.done[object] = struct{}{}
			delete(j.intended, object)
		} else if _, done := j.done[object]; !done {
			j.intended[object] = struct{}{}
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("reading the journal %s: %w", name, err)
	}
	return nil
}

// parseJournalLine returns a record's kind and object name.
func parseJournalLine(line string) (byte, string, bool) {
	if len(line) < 3 || (line[0] != 'i' && line[0] != 'd') || line[1] != ' ' {
		return 0, "", false
	}
	object, err := strconv.Unquote(line[2:])
	return line[0], object, err == nil
}

func journalLine(kind byte, object string) []byte {
	return strconv.AppendQuote([]byte{kind, ' '}, object) // a fresh slice
}

// has reports whether an earlier attempt put object's result durably in
// place.
func (j *journal) has(object string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	_, ok := j.done[object]
	return ok
}

// mayHaveWritten reports whether an earlier attempt may have put object's
// result in place without recording it done.
func (j *journal) mayHaveWritten(object string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	_, ok := j.intended[object]
	return ok
}

// intend records that object's result is about to be renamed into place.
func (j *journal) intend(object string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	_, err := j.f.Write(append(journalLine('i', object), '\n'))
	return err
}

// complete records object done once its result, renamed into dir, is
// durable: at the next flush, which it starts when the batch is full or old.
func (j *journal) complete(object, dir string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.pending) == 0 {
		j.since = time.Now()
	}
	j.pending = append(j.pending, object)
	j.dirs[dir] = struct{}{}
	if len(j.pending) < journalBatch && time.Since(j.since) < journalDelay {
		return nil
	}
	return j.flushLocked()
}

// flush makes the pending objects' results durable and records them done.
func (j *journal) flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.flushLocked()
}

func (j *journal) flushLocked() error {
	if len(j.pending) == 0 {
		return nil
	}
	for dir := range j.dirs {
		if err := durable.SyncDir(j.root, dir); err != nil {
			return fmt.Errorf("journal: syncing %s: %w", dir, err)
		}
	}
	var b []byte
	for _, o := range j.pending {
		b = append(append(b, journalLine('d', o)...), '\n')
	}
	if _, err := j.f.Write(b); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	// The objects done by this attempt are not added to done: the feed
	// gives each object once an attempt (a walk, or wire.Objects.All),
	// so only an earlier attempt's are asked about, and a run over a
	// prefix of millions of objects holds none of their names.
	j.pending = j.pending[:0]
	clear(j.dirs)
	return nil
}

// close flushes what is pending and closes the journal. A closed journal
// holds no names: an ended run is remembered without them.
func (j *journal) close() error {
	err := j.flush()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.done, j.intended, j.pending, j.dirs = nil, nil, nil, nil
	return errors.Join(err, j.f.Close())
}
