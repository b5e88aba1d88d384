package agent

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/dataroot"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/durable"
	"github.com/mlkube/mlkube/internal/status"
)

// objectStore is the object API's side of the node's data root: each
// namespace's objects are files under <data root>/<namespace>, written
// durably (package durable) within the store's bounds.
type objectStore struct {
	root   *os.Root
	node   string
	bounds storeBounds
}

// putTag is what the object API's temporary names carry, then random hex:
// durable.IsTempOf(base, putTag) tells them from a run's (tagged with its UID).
const putTag = "put-"

// sweepTemps removes the temporary files of PUTs a crash interrupted.
func (s *objectStore) sweepTemps() error {
	return durable.SweepTemps(s.root, ".", putTag)
}

// prepare makes namespace ns's directory when it has none. Readable by all,
// as the objects are (package durable): fqn transformer pods, which may run
// as any user, read the namespace's directory through a mount of it alone,
// and the data root itself (0750) keeps everyone else out.
func (s *objectStore) prepare(ns string) error {
	if err := s.root.Mkdir(ns, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

func (s *objectStore) namespace(ns string) *dataroot.Namespace { return dataroot.Of(s.root, ns, "") }

// put stores body as object of ns. want is the SHA-256 the client sent, or
// "". It returns the stored object's description.
func (s *objectStore) put(ns, object string, body io.Reader, size int64, want string) (wire.ObjectInfo, error) {
	if err := s.prepare(ns); err != nil {
		return wire.ObjectInfo{}, s.bounds.full(durable.StorageError(object, err), putAdvice)
	}
	nsRoot, err := s.namespace(ns).Enter()
	if err != nil {
		return wire.ObjectInfo{}, err
	}
	defer nsRoot.Close()
	sum := sha256.New()
	info := wire.ObjectInfo{Name: object, Node: s.node}
	buf := bufpool.Objects.Get()
	defer bufpool.Objects.Put(buf)
	err = s.write(nsRoot, ns, object, durable.TempName(object, putTag+randomHex()), io.TeeReader(body, sum), size, *buf, putAdvice, durable.Hooks{
		Written: func(f *os.File) error { return seal(f, sum, want, &info) },
	})
	if err != nil {
		return wire.ObjectInfo{}, err
	}
	if err := durable.SyncDir(nsRoot, path.Dir(object)); err != nil {
		return wire.ObjectInfo{}, durable.StorageError(object, err)
	}
	return info, nil
}

// putAdvice is what a PUT refused for want of space can do besides freeing
// some.
const putAdvice = "store it on another node with ?node="

// Write writes a run's result (noderun.Results): through the same bounds as
// a PUT, so that a run fills neither the node's disk nor more than its
// namespace's quota.
func (s *objectStore) Write(nsRoot *os.Root, ns, name, tmp string, r io.Reader, buf []byte, hooks durable.Hooks) error {
	return s.write(nsRoot, ns, name, tmp, r, -1, buf, "or write the run's results on another node", hooks)
}

// Place puts a run's own file of size bytes, already on disk (its error
// manifest, noderun.Results), in place by rename, held to ns's quota as a
// PUT's object is when it lands.
func (s *objectStore) Place(nsRoot *os.Root, ns, name string, size int64, rename func() error) error {
	res, err := s.bounds.reserve(ns, regularSize(nsRoot, name))
	if err != nil {
		return err
	}
	defer res.release()
	return res.land(size, func() int64 { return regularSize(nsRoot, name) }, rename)
}

// write is every write of an object of ns into the data root, whose
// directory of ns nsRoot is: a PUT's body or a run's result, size bytes (-1
// when unknown) through tmp (durable.Create with hooks, whose Rename it
// sets). It is admitted within the store's bounds (the object size, the
// free space, ns's quota), holds its bytes in ns's quota as they come,
// lands them on rename, and gives them back when it fails: a refusal, a
// full disk (507, advice says what else to do than free space) or any
// other failure leaves no temporary file.
func (s *objectStore) write(nsRoot *os.Root, ns, name, tmp string, body io.Reader, size int64, buf []byte, advice string, hooks durable.Hooks) error {
	limit, res, err := s.bounds.admit(ns, size, regularSize(nsRoot, name), advice)
	if err != nil {
		return err
	}
	// Whichever way the write ends, it gives back what it holds of the
	// quota (nothing once it landed).
	defer res.release()
	r := &reservingBody{r: &limitedBody{r: body, left: limit.n, err: limit.err}, res: res}
	var written int64
	check := hooks.Written
	hooks.Written = func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		written = fi.Size()
		if check != nil {
			return check(f)
		}
		return nil
	}
	hooks.Rename = func(rename func() error) error {
		return res.land(written, func() int64 { return regularSize(nsRoot, name) }, rename)
	}
	return s.bounds.full(durable.Create(nsRoot, name, tmp, r, buf, hooks), advice)
}

// regularSize is the size of the object name of root, 0 when there is none.
func regularSize(root *os.Root, name string) int64 {
	if fi, err := root.Lstat(name); err == nil && fi.Mode().IsRegular() {
		return fi.Size()
	}
	return 0
}

// seal checks what was written against the checksum the client sent and
// records it beside the file (see checksumAttr).
func seal(f *os.File, sum hash.Hash, want string, info *wire.ObjectInfo) error {
	got := hex.EncodeToString(sum.Sum(nil))
	if want != "" && got != want {
		return status.BadRequest(fmt.Errorf("the body's SHA-256 is %s, not the %s of %s: nothing was written", got, want, wire.HeaderChecksum))
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	info.Size, info.Modified, info.Checksum = fi.Size(), fi.ModTime(), got
	writeChecksum(f, fi, got)
	return nil
}

// randomHex makes each writer's temporary name its own: concurrent PUTs of
// one name never share a file.
func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// parseChecksum validates a client's wire.HeaderChecksum.
func parseChecksum(h string) (string, error) {
	if h == "" {
		return "", nil
	}
	h = strings.ToLower(h)
	if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
		return "", status.BadRequest(fmt.Errorf("%s %q: want a SHA-256 as 64 hex digits", wire.HeaderChecksum, h))
	}
	return h, nil
}

// open opens object of ns for reading, with its description.
func (s *objectStore) open(ns, object string) (*os.File, wire.ObjectInfo, error) {
	f, _, err := s.namespace(ns).Open(object)
	if err != nil {
		return nil, wire.ObjectInfo{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, wire.ObjectInfo{}, status.With(http.StatusInternalServerError, err)
	}
	return f, wire.ObjectInfo{Name: object, Size: fi.Size(), Modified: fi.ModTime(), Checksum: readChecksum(f, fi), Node: s.node}, nil
}

// remove deletes object of ns, or with recursive every object whose name
// starts with it, and returns how many it removed: 404 when none. A reader
// that holds a removed object open reads it to its end.
func (s *objectStore) remove(ns, object string, recursive bool) (int, error) {
	nsRoot, err := s.namespace(ns).Enter()
	if err != nil {
		return 0, status.NotFound(fmt.Errorf("object %q not found", object))
	}
	defer nsRoot.Close()
	names := []string{object}
	if recursive {
		if names, err = s.names(ns, object); err != nil {
			return 0, err
		}
	}
	removed := 0
	for _, name := range names {
		ok, err := s.removeOne(nsRoot, ns, name)
		if err != nil {
			return removed, err
		}
		if ok {
			removed++
			// Best effort: the object is gone for every reader already; the
			// sync only makes that survive a crash sooner.
			_ = durable.SyncDir(nsRoot, path.Dir(name))
		}
	}
	if removed == 0 {
		return 0, status.NotFound(fmt.Errorf("no object %q on node %s", object, s.node))
	}
	return removed, nil
}

// removeOne removes the object name of ns, if there is one, and counts the
// bytes it frees: under ns's usage lock, so that a PUT of the name that
// lands at the same time is counted before or after it, never half.
func (s *objectStore) removeOne(nsRoot *os.Root, ns, name string) (bool, error) {
	removed := false
	err := s.bounds.usage.change(ns, func() (int64, error) {
		fi, err := nsRoot.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() {
			return 0, nil //nolint:nilerr // no object of that name: none to remove
		}
		if err := nsRoot.Remove(name); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return 0, nil
			}
			return 0, status.With(http.StatusInternalServerError, fmt.Errorf("removing %q: %w", name, err))
		}
		removed = true
		return -fi.Size(), nil
	})
	return removed, err
}

// names returns the names of the objects of ns that start with prefix.
func (s *objectStore) names(ns, prefix string) ([]string, error) {
	var names []string
	err := s.walk(ns, prefix, func(name string, _ fs.DirEntry) error {
		names = append(names, name)
		return nil
	})
	return names, err
}

// walk visits the objects of ns whose names start with prefix, walking only
// the directory the prefix names. A namespace or directory that does not
// exist holds none.
func (s *objectStore) walk(ns, prefix string, visit func(string, fs.DirEntry) error) error {
	dir := "."
	if i := strings.LastIndexByte(prefix, '/'); i > 0 {
		dir = prefix[:i]
	}
	if prefix != "" && wire.CheckObject(dir) != nil {
		return nil //nolint:nilerr // no object can have a name under such a directory: none to visit
	}
	err := s.namespace(ns).Walk(dir, func(name string, e fs.DirEntry) error {
		if !strings.HasPrefix(name, prefix) {
			return nil
		}
		return visit(name, e)
	})
	if status.Of(err) == http.StatusNotFound {
		return nil
	}
	return err
}

// list returns a page of the objects of ns on this node.
func (s *objectStore) list(ns string, q listQuery) (wire.ObjectList, error) {
	b := pageBuilder{q: q}
	err := s.walk(ns, q.prefix, func(name string, e fs.DirEntry) error {
		key, grouped := q.key(name)
		if key <= q.after {
			return nil
		}
		if grouped {
			b.add(listEntry{key: key, prefix: true})
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil //nolint:nilerr // removed since the walk saw it: not listed
		}
		b.add(listEntry{key: key, info: wire.ObjectInfo{Name: name, Size: fi.Size(), Modified: fi.ModTime(), Node: s.node}})
		return nil
	})
	if err != nil {
		return wire.ObjectList{}, err
	}
	l := b.page()
	for i := range l.Items {
		if f, info, err := s.open(ns, l.Items[i].Name); err == nil {
			l.Items[i].Checksum = info.Checksum
			f.Close()
		}
	}
	return l, nil
}
