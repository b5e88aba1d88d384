// Package durable writes files so that no partial file is ever under its final name, across
// process or node crash: to a hidden temporary name beside the final one (one file system, so
// the rename is atomic), fsynced, then renamed. The rename itself becomes durable with an fsync
// of its directory (SyncDir). The node agent's object API and its run executor (package
// noderun) both write this way; each tags its temporary names so that each sweeps only its own.
package durable

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
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/status"
)

// Hooks are called during a Create; either may be nil.
type Hooks struct {
	// Written is called with the temporary file once everything is written, before it is
	// synced: to check or record what was written.
	Written func(f *os.File) error
	// BeforeRename is called once the temporary file is durable, just before the rename.
	BeforeRename func() error
	// Rename, when set, makes the rename by calling rename, after BeforeRename: so that the
	// caller can do it under its lock, with what it replaces (the object API counts the bytes
	// a name held and what it holds once renamed as one step). Its error fails the Create as
	// the rename's would.
	Rename func(rename func() error) error
}

// Create writes what r yields to the file name of root through tmp, a hidden name beside it,
// and renames tmp to name once it is durable. A failure removes tmp. A failing r, and a hook's
// error that carries a status, are reported as they are; any other failure as a 500.
func Create(root *os.Root, name, tmp string, r io.Reader, buf []byte, hooks Hooks) error {
	if err := wire.CheckObject(name); err != nil {
		return status.BadRequest(err)
	}
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return StorageError(name, err)
	}
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return StorageError(name, err)
	}
	srcErr, dstErr := bufpool.Copy(f, r, buf)
	if dstErr == nil && srcErr == nil && hooks.Written != nil {
		dstErr = hooks.Written(f)
	}
	if dstErr == nil && srcErr == nil {
		dstErr = f.Sync()
	}
	if err := f.Close(); dstErr == nil {
		dstErr = err
	}
	if dstErr == nil && srcErr == nil {
		if hooks.BeforeRename != nil {
			dstErr = hooks.BeforeRename()
		}
		if dstErr == nil {
			dstErr = renameWith(hooks.Rename, func() error { return root.Rename(tmp, name) })
		}
	}
	if srcErr != nil || dstErr != nil {
		// Best effort: the failure below is what the caller is told, and a tmp left behind
		// never shows as the file and is swept at the next start.
		_ = root.Remove(tmp)
	}
	if srcErr != nil {
		return srcErr
	}
	if dstErr != nil {
		return StorageError(name, dstErr)
	}
	return nil
}

// renameWith makes rename through hook, or itself when there is none.
func renameWith(hook func(func() error) error, rename func() error) error {
	if hook == nil {
		return rename()
	}
	return hook(rename)
}

// StorageError is a failure of the file system while writing name: a 500, unless err already
// carries a status.
func StorageError(name string, err error) error {
	if _, ok := status.Code(err); ok {
		return err
	}
	return status.With(http.StatusInternalServerError, fmt.Errorf("writing %q: %w", name, err))
}

// SyncDir makes the entries of dir (renames into it) durable.
func SyncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// TempName is where final is written until it is complete: beside it, so that the rename stays
// on one file system, and hidden, so that no walk takes it for a file. tag makes it its
// writer's own.
func TempName(final, tag string) string {
	dir, base := path.Split(final)
	return dir + "." + base + "." + tag + tempSuffix
}

const tempSuffix = ".tmp"

// IsTempOf reports whether base (a file name) is a temporary name of writer tag, or, when tag
// ends in "-", of any writer whose tag starts with it.
func IsTempOf(base, tag string) bool {
	if !strings.HasPrefix(base, ".") || !strings.HasSuffix(base, tempSuffix) {
		return false
	}
	rest := strings.TrimSuffix(base, tempSuffix)
	if prefix, ok := strings.CutSuffix(tag, "-"); ok {
		i := strings.LastIndexByte(rest, '.')
		return i >= 0 && strings.HasPrefix(rest[i+1:], prefix+"-")
	}
	return strings.HasSuffix(rest, "."+tag)
}

// SweepTemps removes the temporary files of writer tag (see IsTempOf) under dir, at any depth,
// left when a writer stopped mid-file (a crash): they are never complete files. Hidden
// directories (journals) are not entered.
func SweepTemps(root *os.Root, dir, tag string) error {
	err := fs.WalkDir(root.FS(), dir, func(name string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && name != dir && strings.HasPrefix(e.Name(), "."):
			return fs.SkipDir
		case e.Type().IsRegular() && IsTempOf(e.Name(), tag):
			return root.Remove(name)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
