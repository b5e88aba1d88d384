package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/mlkube/mlkube/api/wire"
)

// keptRuns is how many runs an agent remembers; the oldest finished ones
// are forgotten first.
const keptRuns = 64

// maxOfflineRequest bounds the JSON of a Request.
const maxOfflineRequest = 64 << 10

// offlineRuns holds the agent's runs by ID.
type offlineRuns struct {
	mu    sync.Mutex
	runs  map[string]*offlineRun
	order []string // IDs, oldest first
}

func (rs *offlineRuns) add(r *offlineRun) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.runs == nil {
		rs.runs = map[string]*offlineRun{}
	}
	rs.runs[r.status.ID] = r
	rs.order = append(rs.order, r.status.ID)
	for i := 0; len(rs.order) > keptRuns && i < len(rs.order); {
		if id := rs.order[i]; rs.runs[id].ended() {
			delete(rs.runs, id)
			rs.order = append(rs.order[:i], rs.order[i+1:]...)
			continue
		}
		i++
	}
}

func (rs *offlineRuns) get(id string) *offlineRun {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.runs[id]
}

// list returns the runs, oldest first.
func (rs *offlineRuns) list() []*offlineRun {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]*offlineRun, 0, len(rs.order))
	for _, id := range rs.order {
		out = append(out, rs.runs[id])
	}
	return out
}

// abortAll stops every run, as the agent closes.
func (rs *offlineRuns) abortAll() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.runs {
		r.cancel(errAborted)
	}
}

// serveOffline answers the offline API (see package offline).
func (a *Agent) serveOffline(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.EscapedPath(), wire.RunsPath)
	if ns, name, ok := strings.Cut(rest, "/"); ok {
		a.startOfflineRun(w, r, ns, name)
		return
	}
	switch r.Method {
	case http.MethodGet:
		if rest == "" {
			a.listOfflineRuns(w, r)
			return
		}
		if run := a.offlineRun(w, r, rest, readData); run != nil {
			writeJSON(w, http.StatusOK, run.snapshot())
		}
	case http.MethodDelete:
		if run := a.offlineRun(w, r, rest, writeData); run != nil {
			run.cancel(errAborted)
			writeJSON(w, http.StatusOK, run.snapshot())
		}
	default:
		w.Header().Set("Allow", "GET, DELETE")
		a.fail(w, transformPath{}, withStatus(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed on %s{id}", r.Method, wire.RunsPath)))
	}
}

// offlineRun finds the run id, if the caller may do verb on the data of its
// namespace, or answers.
func (a *Agent) offlineRun(w http.ResponseWriter, r *http.Request, id, verb string) *offlineRun {
	run := a.offline.get(id)
	if run == nil {
		// Authenticated first: an anonymous caller learns nothing.
		if a.authorized(w, r, transformPath{}) {
			a.fail(w, transformPath{}, notFound(fmt.Errorf("offline run %q not found on this node; GET %s lists the runs", id, wire.RunsPath)))
		}
		return nil
	}
	if !a.authorized(w, r, transformPath{}, dataAccess(verb, run.ns)) {
		return nil
	}
	return run
}

// listOfflineRuns answers the runs of the namespaces whose data the caller
// may read; the others' are not listed.
func (a *Agent) listOfflineRuns(w http.ResponseWriter, r *http.Request) {
	if !a.authorized(w, r, transformPath{}) {
		return
	}
	visible := map[string]bool{}
	runs := []wire.RunStatus{}
	for _, run := range a.offline.list() {
		ok, seen := visible[run.ns]
		if !seen {
			_, err := a.opts.Access.Check(r.Context(), r, dataAccess(readData, run.ns))
			ok = err == nil
			visible[run.ns] = ok
		}
		if ok {
			runs = append(runs, run.snapshot())
		}
	}
	writeJSON(w, http.StatusOK, runs)
}

// startOfflineRun answers POST /v1/offline/{namespace}/{name}.
func (a *Agent) startOfflineRun(w http.ResponseWriter, r *http.Request, ns, name string) {
	p, err := parsePipeline(r.URL.EscapedPath(), ns, name)
	if err != nil {
		a.fail(w, p, badPath(err))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		a.fail(w, p, withStatus(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed; POST starts an offline run", r.Method)))
		return
	}
	// A run reads and writes the namespace's data with its Transforms.
	if !a.authorized(w, r, p, append(useTransforms(p), dataAccess(readData, p.namespace), dataAccess(writeData, p.namespace))...) {
		return
	}
	var req wire.RunRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxOfflineRequest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		a.fail(w, p, badPath(fmt.Errorf("offline request: %w", err)))
		return
	}
	if err := req.Validate(); err != nil {
		a.fail(w, p, badPath(fmt.Errorf("offline request: %w", err)))
		return
	}
	if err := checkArgs(req.Args); err != nil {
		a.fail(w, p, fmt.Errorf("offline request: %w", err))
		return
	}
	targets, err := a.resolve(r.Context(), p)
	if err != nil {
		a.fail(w, p, err)
		return
	}
	if err := a.data(p.namespace).checkDir(req.Src); err != nil {
		a.fail(w, p, fmt.Errorf("offline request: src: %w", err))
		return
	}
	if err := a.limits.admitRun(req.Workers); err != nil {
		a.fail(w, p, err)
		return
	}
	run := a.startOffline(p, targets, req)
	a.offline.add(run)
	w.Header().Set("Location", wire.RunsPath+run.status.ID)
	writeJSON(w, http.StatusAccepted, run.snapshot())
}
