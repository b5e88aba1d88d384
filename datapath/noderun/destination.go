package noderun

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/mlkube/mlkube/internal/durable"
	"github.com/mlkube/mlkube/internal/status"
)

// A run's destination is checked on the file system, not by names: a
// symlink can make "out" the same directory as, or one inside, "raw".

// fileID is a file's identity on the node: device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(f *os.File) (fileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, errors.New("no device and inode on this platform")
	}
	return fileID{dev: st.Dev, ino: st.Ino}, nil
}

// maxDepth bounds the walk up a directory tree, against a loop.
const maxDepth = 4096

// within reports whether the directory d is dir or one inside it, following
// d's real parents ("..", after every symlink was resolved) up to top, the
// namespace's directory.
func within(d *os.File, dir, top fileID) (bool, error) {
	fd, err := syscall.Dup(int(d.Fd()))
	if err != nil {
		return false, err
	}
	for range maxDepth {
		cur := os.NewFile(uintptr(fd), "dir")
		id, err := idOf(cur)
		if err != nil || id == dir || id == top {
			cur.Close()
			return err == nil && id == dir, err
		}
		fd, err = syscall.Openat(fd, "..", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		cur.Close()
		if err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("more than %d directories deep", maxDepth)
}

// openExisting opens dir of root, or the nearest of its parents that exists,
// and reports whether it was dir itself.
func openExisting(root *os.Root, dir string) (*os.File, bool, error) {
	for p := dir; ; p = path.Dir(p) {
		f, err := root.Open(p)
		if err == nil {
			return f, p == dir, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || p == "." {
			return nil, false, err
		}
	}
}

// checkOverlap refuses a destination that is the source or inside it, or
// contains it, after resolving symlinks: results would be read as input, or
// input overwritten. A source that does not exist has no objects and cannot
// overlap.
func checkOverlap(root *os.Root, src, dst string) error {
	s, err := root.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return status.BadRequest(fmt.Errorf("source.prefix %q: %w", src, err))
	}
	defer s.Close()
	top, err := root.Open(".")
	if err != nil {
		return durable.StorageError(src, err)
	}
	defer top.Close()
	d, complete, err := openExisting(root, dst)
	if err != nil {
		return status.BadRequest(fmt.Errorf("destination.prefix %q: %w", dst, err))
	}
	defer d.Close()
	if fi, err := d.Stat(); err != nil || !fi.IsDir() {
		return notADir(dst)
	}
	ids := make([]fileID, 3)
	for i, f := range []*os.File{s, d, top} {
		if ids[i], err = idOf(f); err != nil {
			return durable.StorageError(dst, err)
		}
	}
	srcID, dstID, topID := ids[0], ids[1], ids[2]
	overlap, err := within(d, srcID, topID)
	if err == nil && !overlap && complete {
		overlap, err = within(s, dstID, topID)
	}
	switch {
	case err != nil:
		return durable.StorageError(dst, err)
	case overlap:
		return status.BadRequest(fmt.Errorf("destination.prefix %q overlaps source.prefix %q once symlinks are resolved: results would be read as input or input overwritten; choose a destination outside the source", dst, src))
	}
	return nil
}

// lockName is the lock file of a destination, hidden in it.
const lockName = ".mlkube-run.lock"

// lockDestination takes dst (created if need be) for run uid, or answers 409
// naming the run that holds it: two runs writing one destination would
// replace each other's results. The lock is an flock on a file in the
// destination itself, so every name of the directory (symlinks too) shares
// it, and the kernel releases it when its holder's process dies. Closing
// the file releases it.
func lockDestination(root *os.Root, dst, uid string) (*os.File, error) {
	if err := root.MkdirAll(dst, 0o755); err != nil {
		if fi, serr := root.Stat(dst); serr == nil && !fi.IsDir() {
			return nil, notADir(dst)
		}
		return nil, durable.StorageError(dst, err)
	}
	f, err := root.OpenFile(path.Join(dst, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, durable.StorageError(dst, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := make([]byte, 64)
		n, _ := f.ReadAt(holder, 0) // best effort: the refusal stands without the name
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, status.With(http.StatusConflict, fmt.Errorf(
				"destination %q is being written by run %s on this node: two runs must not write one destination; wait for it to end or choose another",
				dst, strings.TrimSpace(string(holder[:n]))))
		}
		return nil, durable.StorageError(dst, err)
	}
	// Who holds it, for the refusal above; the lock stands either way.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(uid+"\n"), 0)
	}
	return f, nil
}

func notADir(dst string) error {
	return status.BadRequest(fmt.Errorf("destination.prefix %q is not a directory", dst))
}
