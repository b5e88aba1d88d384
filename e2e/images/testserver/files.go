package main

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/mlkube/mlkube/e2e/workloads/objects"
)

// maxFileBody bounds one PUT: the e2e suite writes objects of a few KiB.
const maxFileBody = 16 << 20

// files serves a directory of the pod (DATA_DIR, a node's data root mounted from the host) so
// the suite writes and reads a node's objects through the API server's pod proxy, on any
// provider (kind's nodes are containers whose disks the test process cannot see):
//
//	PUT    /files/P             writes the body to P (parents made 0755), under a temporary name first
//	PUT    /dirs/P?owner=UID    makes directory P owned by UID:UID, as an operator prepares a directory
//	GET    /files/P             a file's bytes, or a directory's files, one relative path a line
//	DELETE /files/P             removes P and everything under it
//	POST   /generate/P?count=N  writes P/obj-0000 … P/obj-<N-1>, each "object <i> of node <NODE_NAME>"
//	                            (with ?poison=K, object K starts with "poison" instead)
//	GET    /contents/P          every visible file under P (none starting with "."), as JSON
//	                            {relative path: content}
//
// Every path is resolved inside the root by os.Root, so no name escapes it.
type files struct{ root *os.Root }

func (f files) register(mux *http.ServeMux) {
	mux.HandleFunc("PUT /files/{path...}", f.put)
	mux.HandleFunc("PUT /dirs/{path...}", f.mkdir)
	mux.HandleFunc("GET /files/{path...}", f.get)
	mux.HandleFunc("DELETE /files/{path...}", f.remove)
	mux.HandleFunc("POST /generate/{path...}", f.generate)
	mux.HandleFunc("GET /contents/{path...}", f.contents)
}

// maxGenerate bounds one generate: the suite writes a few thousand objects per node.
const maxGenerate = 100000

func (f files) generate(w http.ResponseWriter, r *http.Request) {
	dir := r.PathValue("path")
	count, err := strconv.Atoi(r.URL.Query().Get("count"))
	if err != nil || count < 0 || count > maxGenerate {
		http.Error(w, fmt.Sprintf("count: want a number of objects from 0 to %d", maxGenerate), http.StatusBadRequest)
		return
	}
	poison := -1
	if p := r.URL.Query().Get("poison"); p != "" {
		if poison, err = strconv.Atoi(p); err != nil {
			http.Error(w, "poison: want an object index", http.StatusBadRequest)
			return
		}
	}
	if err := f.root.MkdirAll(dir, 0o755); err != nil {
		fail(w, err)
		return
	}
	for i := range count {
		data := objects.Content(i, os.Getenv("NODE_NAME"), i == poison)
		if err := f.root.WriteFile(path.Join(dir, objects.Name(i)), data, 0o644); err != nil {
			fail(w, err)
			return
		}
	}
	w.WriteHeader(http.StatusCreated)
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

func (f files) put(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("path")
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxFileBody))
	if err != nil {
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := f.root.MkdirAll(path.Dir(name), 0o755); err != nil {
		fail(w, err)
		return
	}
	tmp := name + ".e2e-tmp"
	if err := f.root.WriteFile(tmp, data, 0o644); err != nil {
		fail(w, err)
		return
	}
	if err := f.root.Rename(tmp, name); err != nil {
		_ = f.root.Remove(tmp)
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusCreated)
}

func (f files) mkdir(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("path")
	owner, err := strconv.Atoi(r.URL.Query().Get("owner"))
	if err != nil {
		http.Error(w, "owner: want a numeric uid, as in ?owner=65532", http.StatusBadRequest)
		return
	}
	if err := f.root.MkdirAll(name, 0o755); err != nil {
		fail(w, err)
		return
	}
	if err := f.root.Chown(name, owner, owner); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusCreated)
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
