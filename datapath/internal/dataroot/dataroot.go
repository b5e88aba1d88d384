// Package dataroot is the node's data directory as the node agent and its
// run executor use it: one directory per namespace, <node root>/<namespace>.
// Every request names objects relative to its namespace's directory, so no
// request of one namespace can name another's data. Each operation opens
// the namespace's directory as an os.Root of its own, which refuses
// symlinks that lead out of it (openat-style confinement, into another
// namespace too), on top of the name checks of wire.CheckObject. Names in
// errors are the caller's.
package dataroot

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/status"
)

// Namespace is one namespace's part of the node's data directory.
type Namespace struct {
	node *os.Root
	ns   string
	// fqnDir is where fqn transformers of the namespace see its directory.
	fqnDir string
}

// Open opens the node's data directory.
func Open(dir string) (*os.Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("data root: %w", err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("data root: %w", err)
	}
	return root, nil
}

// Of returns namespace ns's part of node, the node's data directory, which
// fqn transformers see at fqnDir.
func Of(node *os.Root, ns, fqnDir string) *Namespace {
	return &Namespace{node: node, ns: ns, fqnDir: fqnDir}
}

// Enter opens the namespace's directory: 404 when the namespace has no data
// on the node. The caller closes it; files opened through it stay open.
func (d *Namespace) Enter() (*os.Root, error) {
	r, err := d.node.OpenRoot(d.ns)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, status.NotFound(fmt.Errorf("namespace %s has no data on node", d.ns))
	case err != nil:
		return nil, status.With(http.StatusInternalServerError, fmt.Errorf("the data of namespace %s: %w", d.ns, err))
	}
	return r, nil
}

// Open opens object for reading and returns it with its size: 404 when it
// does not exist, 400 when it escapes the root or is not a regular file.
func (d *Namespace) Open(object string) (*os.File, int64, error) {
	if err := wire.CheckObject(object); err != nil {
		return nil, 0, status.BadRequest(err)
	}
	root, err := d.Enter()
	if errors.Is(err, fs.ErrNotExist) || status.Of(err) == http.StatusNotFound {
		return nil, 0, status.NotFound(fmt.Errorf("object %q not found", object))
	}
	if err != nil {
		return nil, 0, err
	}
	defer root.Close()
	// O_NONBLOCK: opening a FIFO would otherwise wait for a writer.
	f, err := root.OpenFile(object, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, status.NotFound(fmt.Errorf("object %q not found", object))
	}
	if err != nil {
		return nil, 0, status.BadRequest(fmt.Errorf("object %q: %w", object, err))
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, status.BadRequest(fmt.Errorf("object %q is not a regular file", object))
	}
	return f, fi.Size(), nil
}

// FQN is the path of object as fqn transformers see it.
func (d *Namespace) FQN(object string) string { return filepath.Join(d.fqnDir, object) }

// Walk calls visit with each regular file under dir, at any depth, in
// lexical order, as the walk finds it: a directory of millions of files is
// never listed whole. Symlinks are not followed, neither to files nor to
// directories. Hidden names (starting with ".": journals, temporary files)
// are skipped, files and directories. An error of visit stops the walk and
// is returned as is.
func (d *Namespace) Walk(dir string, visit func(name string, e fs.DirEntry) error) error {
	root, err := d.Enter()
	if err != nil {
		return err
	}
	defer root.Close()
	var visitErr error
	err = fs.WalkDir(root.FS(), dir, func(name string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case name != dir && strings.HasPrefix(e.Name(), "."):
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		case e.Type().IsRegular():
			visitErr = visit(name, e)
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
		return status.NotFound(fmt.Errorf("%q not found in the namespace's data", dir))
	}
	return status.BadRequest(fmt.Errorf("listing %q: %w", dir, err))
}
