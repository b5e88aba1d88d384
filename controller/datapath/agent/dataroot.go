package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// dataRoot is the node's data directory. Every object is opened through an
// os.Root, which refuses symlinks that lead out of it (openat-style
// confinement), on top of the name checks of checkObject.
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
	if err := checkObject(object); err != nil {
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
