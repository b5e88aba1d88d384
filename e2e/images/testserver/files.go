package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"
)

// files serves a directory of the pod (DATA_DIR, a node's data root mounted from the host) so
// the suite can look at what is really on a node's disk, through the API server's pod proxy, on
// any provider (kind's nodes are containers whose disks the test process cannot see): that an
// output is on the node that made it, that no temporary file is left. It writes nothing: the
// suite puts objects through the object API, as users do. It removes a test namespace's data
// after the test.
//
//	GET    /files/P      a file's bytes, or a directory's files, one relative path a line
//	DELETE /files/P      removes P and everything under it
//	GET    /contents/P   every visible file under P (none starting with "."), as JSON
//	                     {relative path: content}
//
// Every path is resolved inside the root by os.Root, so no name escapes it.
type files struct{ root *os.Root }

func (f files) register(mux *http.ServeMux) {
	mux.HandleFunc("GET /files/{path...}", f.get)
	mux.HandleFunc("DELETE /files/{path...}", f.remove)
	mux.HandleFunc("GET /contents/{path...}", f.contents)
}

// maxContents bounds the answer of contents.
const maxContents = 64 << 20

func (f files) contents(w http.ResponseWriter, r *http.Request) {
	dir := r.PathValue("path")
	out := map[string]string{}
	total := 0
	err := fs.WalkDir(f.root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := f.root.ReadFile(p)
		if err != nil {
			return err
		}
		if total += len(data); total > maxContents {
			return fmt.Errorf("more than %d bytes under %s", maxContents, dir)
		}
		out[strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")] = string(data)
		return nil
	})
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, out)
}

func (f files) get(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("path")
	if name == "" {
		name = "."
	}
	info, err := f.root.Stat(name)
	if err != nil {
		fail(w, err)
		return
	}
	if !info.IsDir() {
		data, err := f.root.ReadFile(name)
		if err != nil {
			fail(w, err)
			return
		}
		_, _ = w.Write(data)
		return
	}
	var list strings.Builder
	err = fs.WalkDir(f.root.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel := strings.TrimPrefix(strings.TrimPrefix(p, name), "/")
			fmt.Fprintln(&list, rel)
		}
		return err
	})
	if err != nil {
		fail(w, err)
		return
	}
	_, _ = io.WriteString(w, list.String())
}

func (f files) remove(w http.ResponseWriter, r *http.Request) {
	if err := f.root.RemoveAll(r.PathValue("path")); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fail answers 404 for a name that does not exist and 500 otherwise, with the error's text.
func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if os.IsNotExist(err) {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}
