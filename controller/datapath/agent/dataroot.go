package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/bufpool"
)

// dataRoot is the node's data directory. Every object is opened through an
// os.Root, which refuses symlinks that lead out of it (openat-style
// confinement), on top of the name checks of wire.CheckObject.
type dataRoot struct {
	dir  string
	root *os.Root
}

func openDataRoot(dir string) (*dataRoot, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data root: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("data root: %w", err)
	}
	return &dataRoot{dir: abs, root: root}, nil
}

// open opens object for reading and returns it with its size: 404 when it
// does not exist, 400 when it escapes the root or is not a regular file.
func (d *dataRoot) open(object string) (*os.File, int64, error) {
	if err := wire.CheckObject(object); err != nil {
		return nil, 0, badPath(err)
	}
	// O_NONBLOCK: opening a FIFO would otherwise wait for a writer.
	f, err := d.root.OpenFile(object, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, notFound(fmt.Errorf("object %q not found", object))
	}
	if err != nil {
		return nil, 0, badPath(fmt.Errorf("object %q: %w", object, err))
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, badPath(fmt.Errorf("object %q is not a regular file", object))
	}
	return f, fi.Size(), nil
}

// fqn is the path of object on the node, which transformers see at the same
// place.
func (d *dataRoot) fqn(object string) string { return filepath.Join(d.dir, object) }

// create writes what r yields to the object name through tmp, a name beside
// it, renamed to name once complete: no partial object is ever under name,
// and a failure removes tmp. A failing r is reported as it failed; a
// failing file system as a 500.
func (d *dataRoot) create(name, tmp string, r io.Reader, buf []byte) error {
	if err := wire.CheckObject(name); err != nil {
		return badPath(err)
	}
	if dir := path.Dir(name); dir != "." {
		if err := d.root.MkdirAll(dir, 0o755); err != nil {
			return storageError(name, err)
		}
	}
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return storageError(name, err)
	}
	srcErr, dstErr := bufpool.Copy(f, r, buf)
	if err := f.Close(); dstErr == nil {
		dstErr = err
	}
	if dstErr == nil && srcErr == nil {
		dstErr = d.root.Rename(tmp, name)
	}
	if srcErr != nil || dstErr != nil {
		// Best effort: the failure below is what the caller is told, and a
		// tmp left behind never shows as the object.
		_ = d.root.Remove(tmp)
	}
	if srcErr != nil {
		return srcErr
	}
	if dstErr != nil {
		return storageError(name, dstErr)
	}
	return nil
}

func storageError(name string, err error) error {
	return withStatus(http.StatusInternalServerError, fmt.Errorf("writing %q: %w", name, err))
}

// checkDir answers 404 when dir does not exist and 400 when it is not a
// directory.
func (d *dataRoot) checkDir(dir string) error {
	fi, err := d.root.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notFound(fmt.Errorf("%q not found under the data root", dir))
	case err != nil:
		return badPath(fmt.Errorf("%q: %w", dir, err))
	case !fi.IsDir():
		return badPath(fmt.Errorf("%q is not a directory", dir))
	}
	return nil
}

// walk calls visit with each regular file under dir, at any depth, in
// lexical order, as the walk finds it: a directory of millions of files is
// never listed whole. Symlinks are not followed, neither to files nor to
// directories. An error of visit stops the walk and is returned as is.
func (d *dataRoot) walk(dir string, visit func(name string) error) error {
	var visitErr error
	err := fs.WalkDir(d.root.FS(), dir, func(name string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			visitErr = visit(name)
			return visitErr
		}
		return nil
	})
	switch {
	case err == nil:
		return nil
	case visitErr != nil:
		return visitErr
	case errors.Is(err, fs.ErrNotExist):
		return notFound(fmt.Errorf("%q not found under the data root", dir))
	}
	return badPath(fmt.Errorf("listing %q: %w", dir, err))
}
