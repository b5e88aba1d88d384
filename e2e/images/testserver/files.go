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
//
// Every path is resolved inside the root by os.Root, so no name escapes it.
type files struct{ root *os.Root }

func (f files) register(mux *http.ServeMux) {
	mux.HandleFunc("PUT /files/{path...}", f.put)
	mux.HandleFunc("PUT /dirs/{path...}", f.mkdir)
	mux.HandleFunc("GET /files/{path...}", f.get)
	mux.HandleFunc("DELETE /files/{path...}", f.remove)
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
