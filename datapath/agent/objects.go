package agent

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/status"
)

// Verbs of the object API on the virtual resource objects (wire.PathObjects).
var objectVerbs = map[string]string{
	http.MethodPut:    writeData,
	http.MethodGet:    readData,
	http.MethodHead:   readData,
	http.MethodDelete: wire.VerbDelete,
}

// serveObjects answers the object API: the caller is authorized for the
// method's verb in the path's namespace, then the request is answered from
// this node or sent on to the node that holds (or is to hold) the object
// (see forward.go).
func (a *Agent) serveObjects(w http.ResponseWriter, r *http.Request) {
	p, err := parseObjectPath(r.URL.EscapedPath())
	if err != nil {
		a.failObject(w, p, status.BadRequest(err))
		return
	}
	verb, ok := objectVerbs[r.Method]
	batch := isBatch(r, p)
	switch {
	case batch:
		verb, ok = readData, true
	case p.object == "":
		verb, ok = wire.VerbList, r.Method == http.MethodGet
	}
	if !ok {
		w.Header().Set("Allow", "GET, HEAD, PUT, DELETE, POST")
		a.failObject(w, p, status.With(http.StatusMethodNotAllowed, fmt.Errorf("method %s: the object API takes GET, HEAD, PUT and DELETE of an object, GET of %s{namespace}/ to list, and POST of %s{namespace}/?%s=true to read many", r.Method, wire.PathObjects, wire.PathObjects, wire.QueryBatch)))
		return
	}
	forwarded := r.Header.Get(wire.HeaderForwardedBy) != ""
	if forwarded {
		if err := a.checkPeer(r); err != nil {
			a.failObject(w, p, err)
			return
		}
	}
	if _, err := a.opts.Access.Check(r.Context(), r, access.Request{Verb: verb, Namespace: p.namespace, Resource: access.ResourceObjects}); err != nil {
		a.failObject(w, p, accessError(w, err))
		return
	}
	if batch {
		// This node's objects only: a reader asks each node's agent for the objects it holds.
		a.serveBatch(w, r, p)
		return
	}
	if forwarded || a.opts.Peers == nil {
		a.serveLocal(w, r, p)
		return
	}
	a.serveSpread(w, r, p)
}

// serveLocal answers from this node's data root only.
func (a *Agent) serveLocal(w http.ResponseWriter, r *http.Request, p objectPath) {
	if err := a.answerLocal(w, r, p); err != nil {
		a.failObject(w, p, err)
	}
}

// answerLocal answers from this node's data root, or returns why it cannot
// with nothing written: a 404 leaves the caller free to ask other nodes.
func (a *Agent) answerLocal(w http.ResponseWriter, r *http.Request, p objectPath) error {
	switch {
	case p.object == "":
		return a.listLocal(w, r, p)
	case r.Method == http.MethodPut:
		return a.putLocal(w, r, p)
	case r.Method == http.MethodDelete:
		n, err := a.objects.remove(p.namespace, p.object, r.URL.Query().Get(wire.QueryRecursive) == "true")
		if err != nil {
			return err
		}
		w.Header().Set(wire.HeaderNode, a.opts.Node)
		writeJSON(w, http.StatusOK, deleted{Deleted: n})
		return nil
	}
	return a.getLocal(w, r, p)
}

// deleted answers a DELETE: how many objects it removed.
type deleted struct {
	Deleted int `json:"deleted"`
}

func (a *Agent) putLocal(w http.ResponseWriter, r *http.Request, p objectPath) error {
	want, err := parseChecksum(r.Header.Get(wire.HeaderChecksum))
	if err != nil {
		return err
	}
	info, err := a.objects.put(p.namespace, p.object, r.Body, r.ContentLength, want)
	if err != nil {
		return err
	}
	setObjectHeaders(w.Header(), info)
	writeJSON(w, http.StatusCreated, info)
	return nil
}

// getLocal answers GET and HEAD, Range and conditional requests included.
func (a *Agent) getLocal(w http.ResponseWriter, r *http.Request, p objectPath) error {
	f, info, err := a.objects.open(p.namespace, p.object)
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	setObjectHeaders(h, info)
	h.Set("Content-Type", "application/octet-stream")
	if info.Checksum != "" {
		h.Set("ETag", strconv.Quote(info.Checksum))
	}
	http.ServeContent(w, r, "", info.Modified, f)
	return nil
}

func setObjectHeaders(h http.Header, info wire.ObjectInfo) {
	h.Set(wire.HeaderNode, info.Node)
	if info.Checksum != "" {
		h.Set(wire.HeaderChecksum, info.Checksum)
	}
}

func (a *Agent) listLocal(w http.ResponseWriter, r *http.Request, p objectPath) error {
	q, err := parseListQuery(r.URL.Query())
	if err != nil {
		return status.BadRequest(err)
	}
	l, err := a.objects.list(p.namespace, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, l)
	return nil
}

// failObject answers err as the agent's JSON error.
func (a *Agent) failObject(w http.ResponseWriter, p objectPath, err error) {
	writeError(w, status.Of(err), Error{Error: status.Message(err), Object: p.object, Node: a.opts.Node})
}
