package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/mlkube/mlkube/datapath/internal/dataroot"
	"github.com/mlkube/mlkube/internal/status"
)

// QuotaAnnotation on a Namespace sets its quota of bytes per node, over the
// agent's --namespace-quota. Only who may update Namespace objects (cluster
// admins, not namespace editors) can set it.
const QuotaAnnotation = "data.mlkube.io/quota-per-node"

// storeBounds are the limits of a PUT: the object size, the free space the
// data root keeps, and each namespace's bytes on the node. Each refusal names
// its limit and how to change it.
type storeBounds struct {
	node string
	// maxSize bounds an object; negative is none (--max-object-size).
	maxSize int64
	// minFree is the free space a PUT never takes (--min-free-bytes).
	minFree int64
	// quota bounds each namespace's bytes on the node; 0 is none
	// (--namespace-quota), and quotaOf overrides it per namespace.
	quota   int64
	quotaOf func(ns string) (int64, bool)
	// freeBytes is the space left on the data root (statfs).
	freeBytes func() (int64, error)
	usage     usage
}

// bound is a limit on the bytes of a body: more than n fail with err.
type bound struct {
	n   int64
	err error
}

// admit returns the tightest bound on a PUT of ns whose body is size bytes
// (-1 when unknown), or refuses it already when size is over it.
func (b *storeBounds) admit(ns string, size int64) (bound, error) {
	tight := bound{n: -1}
	tighten := func(n int64, err error) {
		if tight.n < 0 || n < tight.n {
			tight = bound{max(n, 0), err}
		}
	}
	if b.maxSize >= 0 {
		tighten(b.maxSize, status.With(http.StatusRequestEntityTooLarge, fmt.Errorf(
			"object is over the limit of %d bytes of node %s's agent (--max-object-size)", b.maxSize, b.node)))
	}
	free, err := b.freeBytes()
	if err != nil {
		return bound{}, status.With(http.StatusInternalServerError, fmt.Errorf("free space of the data root: %w", err))
	}
	tighten(free-b.minFree, status.With(http.StatusInsufficientStorage, fmt.Errorf(
		"node %s's data root has %d bytes free and keeps at least %d free (--min-free-bytes): the object does not fit; free space, or store it on another node with ?node=",
		b.node, free, b.minFree)))
	if q := b.quotaFor(ns); q > 0 {
		used, err := b.usage.of(b.node, ns)
		if err != nil {
			return bound{}, err
		}
		tighten(q-used, status.With(http.StatusInsufficientStorage, fmt.Errorf(
			"namespace %s holds %d bytes on node %s and its quota there is %d bytes (--namespace-quota, or the Namespace annotation %s that a cluster admin sets): the object does not fit; delete objects or ask for a larger quota",
			ns, used, b.node, q, QuotaAnnotation)))
	}
	if size >= 0 && tight.n >= 0 && size > tight.n {
		return bound{}, tight.err
	}
	return tight, nil
}

// full answers a write that found the data root full (ENOSPC, or EDQUOT
// of a quota the file system keeps) 507, as admit refuses a PUT that does
// not fit: the space admit saw was taken meanwhile, by concurrent PUTs or
// by other writers on the node. Other errors pass as they are.
func (b *storeBounds) full(err error) error {
	errno, ok := errors.AsType[unix.Errno](err)
	if !ok || (errno != unix.ENOSPC && errno != unix.EDQUOT) {
		return err
	}
	return status.With(http.StatusInsufficientStorage, fmt.Errorf(
		"node %s's data root is full (%w): the object was not stored; free space, or store it on another node with ?node=",
		b.node, errno))
}

func (b *storeBounds) quotaFor(ns string) int64 {
	if b.quotaOf != nil {
		if q, ok := b.quotaOf(ns); ok {
			return q
		}
	}
	return b.quota
}

// statfsFree returns a function that answers the space unprivileged writers
// have left on the file system of dir.
func statfsFree(dir string) func() (int64, error) {
	return func() (int64, error) {
		var st unix.Statfs_t
		if err := unix.Statfs(dir, &st); err != nil {
			return 0, err
		}
		return int64(st.Bavail) * st.Bsize, nil //nolint:gosec // block counts fit int64
	}
}

// usage is the bytes of each namespace's objects on the node: walked once,
// at a namespace's first PUT under a quota, then kept up to date by PUT and
// DELETE. Concurrent PUTs each see the usage before the others end, so a
// namespace may pass its quota by the objects in flight.
type usage struct {
	mu    sync.Mutex
	root  func(ns string) *dataroot.Namespace
	bytes map[string]int64
}

func (u *usage) of(node, ns string) (int64, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if n, ok := u.bytes[ns]; ok {
		return n, nil
	}
	var n int64
	err := u.root(ns).Walk(".", func(_ string, e fs.DirEntry) error {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	if err != nil && status.Of(err) != http.StatusNotFound {
		return 0, fmt.Errorf("namespace %s's bytes on node %s: %w", ns, node, err)
	}
	if u.bytes == nil {
		u.bytes = map[string]int64{}
	}
	u.bytes[ns] = n
	return n, nil
}

// add counts delta more bytes for ns, when its usage is kept.
func (u *usage) add(ns string, delta int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if n, ok := u.bytes[ns]; ok {
		u.bytes[ns] = n + delta
	}
}
