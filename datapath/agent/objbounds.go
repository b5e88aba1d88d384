package agent

import (
	"errors"
	"fmt"
	"io"
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

// storeBounds are the limits of every write into the data root, an object
// API PUT or a run's result (objectStore.write): the object size, the free
// space the data root keeps, and each namespace's bytes on the node. Each
// refusal names its limit and how to change it.
type storeBounds struct {
	node string
	// size bounds an object.
	size sizeLimit
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

// admit returns the tightest bound on the body of a write of ns (a PUT or a
// run's result), size bytes (-1 when unknown), and the reservation that
// keeps the write within ns's quota, holding size already when it is known;
// or refuses the write at once when it cannot fit. replaced is the size of
// the object the write overwrites, 0 when none (see reservation). advice is
// what a refusal for want of free space suggests besides freeing some.
func (b *storeBounds) admit(ns string, size, replaced int64, advice string) (bound, *reservation, error) {
	tight, err := b.bound(advice)
	if err != nil {
		return bound{}, nil, err
	}
	if size >= 0 && tight.n >= 0 && size > tight.n {
		return bound{}, nil, tight.err
	}
	res, err := b.reserve(ns, replaced)
	if err == nil && size >= 0 {
		err = res.cover(size)
	}
	if err != nil {
		return bound{}, nil, err
	}
	return tight, res, nil
}

// bound is the tighter of the object size limit and the free space. The
// quota is no bound: the bytes it leaves change as other PUTs run, so a
// PUT's reservation keeps it.
func (b *storeBounds) bound(advice string) (bound, error) {
	tight := bound{n: -1}
	tighten := func(n int64, err error) {
		if tight.n < 0 || n < tight.n {
			tight = bound{max(n, 0), err}
		}
	}
	if b.size.max >= 0 {
		tighten(b.size.max, b.size.err)
	}
	free, err := b.freeBytes()
	if err != nil {
		return bound{}, status.With(http.StatusInternalServerError, fmt.Errorf("free space of the data root: %w", err))
	}
	tighten(free-b.minFree, status.With(http.StatusInsufficientStorage, fmt.Errorf(
		"node %s's data root has %d bytes free and keeps at least %d free (--min-free-bytes): the object does not fit; free space, or %s",
		b.node, free, b.minFree, advice)))
	return tight, nil
}

// full answers a write that found the data root full (ENOSPC, or EDQUOT
// of a quota the file system keeps) 507, as admit refuses a write that does
// not fit: the space admit saw was taken meanwhile, by concurrent writes or
// by other writers on the node. Other errors pass as they are.
func (b *storeBounds) full(err error, advice string) error {
	errno, ok := errors.AsType[unix.Errno](err)
	if !ok || (errno != unix.ENOSPC && errno != unix.EDQUOT) {
		return err
	}
	return status.With(http.StatusInsufficientStorage, fmt.Errorf(
		"node %s's data root is full (%w): the object was not stored; free space, or %s",
		b.node, errno, advice))
}

// reserve returns a reservation of a PUT of ns over an object of replaced
// bytes, holding nothing yet; ns's objects are walked first when it has a
// quota.
func (b *storeBounds) reserve(ns string, replaced int64) (*reservation, error) {
	r := &reservation{node: b.node, ns: ns, quota: b.quotaFor(ns), credit: replaced, sp: b.usage.space(ns)}
	if r.quota > 0 {
		if err := b.usage.walk(b.node, ns, r.sp); err != nil {
			return nil, err
		}
	}
	return r, nil
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

// usage is the bytes of each namespace's objects on the node, walked at the
// namespace's first PUT under a quota and then kept by PUT and DELETE, and
// the bytes its PUTs in flight reserve (see reservation): a namespace's
// objects and its PUTs in flight fit its quota together, so it never holds
// more however many PUTs run at once. A quota set while PUTs admitted
// without one are in flight applies to the PUTs after them.
type usage struct {
	mu     sync.Mutex // guards spaces, not what they count
	root   func(ns string) *dataroot.Namespace
	spaces map[string]*space
}

// space is one namespace's usage. Its lock guards the ledger and is held
// around each change of the namespace's objects together with the reading
// of the size it replaces (a PUT's rename, a DELETE's removal), so that
// changes of one name that race are each counted once. It is never held
// across a body's copy, nor by another namespace's PUTs.
type space struct {
	mu sync.Mutex
	ledger
}

// ledger counts a namespace's bytes: stored in its objects (once walked)
// and reserved by its PUTs in flight. Plain arithmetic: its space's lock
// guards it.
type ledger struct {
	walked           bool
	stored, reserved int64
}

// grow reserves n more bytes if they fit quota with the rest.
func (l *ledger) grow(n, quota int64) bool {
	if l.stored+l.reserved+n > quota {
		return false
	}
	l.reserved += n
	return true
}

// settle gives back held reserved bytes and counts delta more stored: a PUT
// ended (delta is what its rename added, 0 when it did not land), or a
// DELETE freed -delta.
func (l *ledger) settle(held, delta int64) {
	l.reserved -= held
	if l.walked {
		l.stored += delta
	}
}

// space returns ns's usage.
func (u *usage) space(ns string) *space {
	u.mu.Lock()
	defer u.mu.Unlock()
	sp, ok := u.spaces[ns]
	if !ok {
		if u.spaces == nil {
			u.spaces = map[string]*space{}
		}
		sp = &space{}
		u.spaces[ns] = sp
	}
	return sp
}

// walk counts the bytes of ns's objects into sp, unless they were already:
// under its lock, so that a change the walk sees is not counted again.
func (u *usage) walk(node, ns string, sp *space) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.walked {
		return nil
	}
	var n int64
	err := u.root(ns).Walk(".", func(_ string, e fs.DirEntry) error {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	if err != nil && status.Of(err) != http.StatusNotFound {
		return fmt.Errorf("namespace %s's bytes on node %s: %w", ns, node, err)
	}
	sp.walked, sp.stored = true, n
	return nil
}

// change runs do, a change of ns's objects that returns the bytes it adds
// (negative when it frees them), under ns's lock, and counts them.
func (u *usage) change(ns string, do func() (int64, error)) error {
	sp := u.space(ns)
	sp.mu.Lock()
	defer sp.mu.Unlock()
	delta, err := do()
	sp.settle(0, delta)
	return err
}

// reservation is what one write (a PUT, a run's result) holds in its
// namespace's usage: the bytes its object may add once it lands, held as
// soon as they are known (the whole Content-Length at admission, else as
// the body arrives) and refused when they would pass the quota with the
// namespace's objects and its other writes in flight. The quota counts
// objects, not the copies being written: an overwrite ends with its object
// in place of the one it replaces, so it needs only what it adds over it
// (credit), while the free space it needs is its whole size, as both are on
// disk until the rename. The landing counts what the rename did replace,
// which a DELETE or another write of the name may have changed since
// admission, and holds more if that needs more. Only the writer's
// goroutine uses a reservation.
type reservation struct {
	node, ns string
	sp       *space
	quota    int64 // 0: none, and nothing is held
	credit   int64 // the size of the object it replaces, at admission
	held     int64
}

// holds reports whether the PUT holds n bytes already, or needs none.
func (r *reservation) holds(n int64) bool { return r.quota == 0 || n <= r.held }

// cover holds what the PUT adds once got bytes of its body came, or refuses
// the PUT when that would pass the quota.
func (r *reservation) cover(got int64) error {
	if r.holds(got - r.credit) {
		return nil
	}
	r.sp.mu.Lock()
	defer r.sp.mu.Unlock()
	return r.holdLocked(got - r.credit)
}

// holdLocked holds n bytes in all, or refuses; r.sp.mu is held.
func (r *reservation) holdLocked(n int64) error {
	if r.holds(n) {
		return nil
	}
	if !r.sp.grow(n-r.held, r.quota) {
		return status.With(http.StatusInsufficientStorage, fmt.Errorf(
			"namespace %s holds %d bytes on node %s, and its other writes in flight there (PUTs, runs' results) may add up to %d; its quota there is %d bytes (--namespace-quota, or the Namespace annotation %s that a cluster admin sets): the object does not fit; delete objects or ask for a larger quota",
			r.ns, r.sp.stored, r.node, r.sp.reserved-r.held, r.quota, QuotaAnnotation))
	}
	r.held = n
	return nil
}

// land makes the PUT's object of size bytes the namespace's by rename, under
// the namespace's lock together with replaced, which answers the size of the
// object the rename replaces (0 when none), and turns what the PUT holds
// into what it added: if that is more than it holds, the rest must fit the
// quota.
func (r *reservation) land(size int64, replaced func() int64, rename func() error) error {
	r.sp.mu.Lock()
	defer r.sp.mu.Unlock()
	delta := size - replaced()
	if err := r.holdLocked(delta); err != nil {
		return err
	}
	if err := rename(); err != nil {
		return err
	}
	r.sp.settle(r.held, delta)
	r.held = 0
	return nil
}

// release gives back what the PUT holds once it ended: all of it if it
// failed (refused, a checksum mismatch, its client gone, a write failed),
// nothing if it landed.
func (r *reservation) release() {
	if r.held == 0 {
		return
	}
	r.sp.mu.Lock()
	defer r.sp.mu.Unlock()
	r.sp.settle(r.held, 0)
	r.held = 0
}

// reservingBody reads a PUT's body, holding what the bytes that came add in
// the PUT's reservation: a body of unknown length is refused as soon as they
// would pass the quota.
type reservingBody struct {
	r   io.Reader
	res *reservation
	got int64
}

func (b *reservingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.got += int64(n)
	if refused := b.res.cover(b.got); refused != nil {
		return 0, refused
	}
	return n, err
}
