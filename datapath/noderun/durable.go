package noderun

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/status"
	"github.com/mlkube/mlkube/internal/bufpool"
)

// Results are written durably: to a hidden temporary name beside the final
// one (one file system, so the rename is atomic), fsynced, then renamed. No
// partial object is ever under a final name, across process or node crash.
// The rename itself becomes durable with an fsync of its directory, which a
// run batches with its journal (see journal): the journal records an object
// only after that fsync.

// create writes what r yields to the object name of root (a namespace's
// directory) through tmp, a hidden name beside it, calling beforeRename once
// tmp is durable and renaming it to name then. A failure removes tmp. A
// failing r is reported as it failed; a failing file system as a 500.
func create(root *os.Root, name, tmp string, r io.Reader, buf []byte, beforeRename func() error) error {
	if err := wire.CheckObject(name); err != nil {
		return status.BadRequest(err)
	}
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return storageError(name, err)
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return storageError(name, err)
	}
	srcErr, dstErr := bufpool.Copy(f, r, buf)
	if dstErr == nil && srcErr == nil {
		dstErr = f.Sync()
	}
	if err := f.Close(); dstErr == nil {
		dstErr = err
	}
	if dstErr == nil && srcErr == nil {
		if dstErr = beforeRename(); dstErr == nil {
			dstErr = root.Rename(tmp, name)
		}
	}
	if srcErr != nil || dstErr != nil {
		// Best effort: the failure below is what the caller is told, and a
		// tmp left behind never shows as the object and is swept when the
		// run restarts.
		_ = root.Remove(tmp)
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
	return status.With(http.StatusInternalServerError, fmt.Errorf("writing %q: %w", name, err))
}

// syncDir makes the entries of dir (renames into it) durable.
func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// tempName is where the result for final is written until it is complete:
// beside it, so that the rename stays on one file system, and hidden, so
// that no walk takes it as input. uid makes it the run's own.
func tempName(final, uid string) string {
	dir, base := path.Split(final)
	return dir + "." + base + "." + uid + tempSuffix
}

const tempSuffix = ".tmp"

// isTempOf reports whether base (a file name) is a temporary name of run uid.
func isTempOf(base, uid string) bool {
	return strings.HasPrefix(base, ".") && strings.HasSuffix(base, "."+uid+tempSuffix)
}

// sweepTemps removes the temporary files run uid left under dir, at any
// depth, when it stopped mid-object (a crash): they are never results, and
// a resumed run writes its objects again. Hidden directories (journals) are
// not entered.
func sweepTemps(root *os.Root, dir, uid string) error {
	err := fs.WalkDir(root.FS(), dir, func(name string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && name != dir && strings.HasPrefix(e.Name(), "."):
			return fs.SkipDir
		case e.Type().IsRegular() && isTempOf(e.Name(), uid):
			return root.Remove(name)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
