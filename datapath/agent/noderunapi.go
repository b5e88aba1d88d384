package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/status"
	"github.com/mlkube/mlkube/internal/access"
)

// The manager's node runs API (api/wire/noderuns.go):
//
//	PUT    /v1/runs/{namespace}/{run}        NodeRunSpec → 200 NodeRunStatus
//	GET    /v1/runs/{namespace}/{run}?uid=U  → 200 NodeRunStatus, 404 when the agent holds no such run
//	DELETE /v1/runs/{namespace}/{run}?uid=U  suspends the run → 200 NodeRunStatus

// maxNodeRunSpec bounds the JSON of a NodeRunSpec: a list source of
// etlv1alpha1.MaxRunObjects names of wire.MaxObjectName bytes, quoted.
const maxNodeRunSpec = etlv1alpha1.MaxRunObjects*(wire.MaxObjectName+8) + 64<<10

// manageRuns is what RBAC must grant a caller of the node runs API: a
// non-resource URL only the manager's ClusterRole has, since a run writes
// any namespace's data with its Transforms.
var manageRuns = access.Request{Verb: "create", Path: wire.NodeRunsPath}

// serveNodeRuns answers the node runs API.
func (a *Agent) serveNodeRuns(w http.ResponseWriter, r *http.Request) {
	// Before anything is parsed or looked up: another caller learns nothing.
	if !a.authorized(w, r, transformPath{}, manageRuns) {
		return
	}
	key, err := parseRunPath(r.URL.EscapedPath())
	if err != nil {
		a.fail(w, transformPath{}, status.BadRequest(err))
		return
	}
	switch r.Method {
	case http.MethodPut:
		a.putNodeRun(w, r, key)
	case http.MethodGet, http.MethodDelete:
		run := a.nodeRuns.get(key)
		if uid := r.URL.Query().Get("uid"); run == nil || (uid != "" && uid != run.plan.spec.UID) {
			a.fail(w, transformPath{}, status.NotFound(fmt.Errorf("this node holds no run %s with uid %q; PUT starts or resumes it", key, uid)))
			return
		}
		if r.Method == http.MethodDelete {
			run.suspend()
		}
		writeJSON(w, http.StatusOK, run.status())
	default:
		w.Header().Set("Allow", "GET, PUT, DELETE")
		a.fail(w, transformPath{}, status.With(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed on %s{namespace}/{run}", r.Method, wire.NodeRunsPath)))
	}
}

// parseRunPath parses /v1/runs/{namespace}/{run}. Neither may be escaped:
// valid names have nothing to escape.
func parseRunPath(escaped string) (runKey, error) {
	ns, name, ok := strings.Cut(strings.TrimPrefix(escaped, wire.NodeRunsPath), "/")
	if !ok {
		return runKey{}, fmt.Errorf("path %q: want %s{namespace}/{run}", escaped, wire.NodeRunsPath)
	}
	k := runKey{ns: ns, name: name}
	return k, checkRunKey(k)
}

// putNodeRun answers PUT: it starts the run, resumes it, or answers the one
// going on.
func (a *Agent) putNodeRun(w http.ResponseWriter, r *http.Request, key runKey) {
	var spec wire.NodeRunSpec
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxNodeRunSpec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		a.fail(w, transformPath{}, status.BadRequest(fmt.Errorf("node run spec: %w", err)))
		return
	}
	plan, err := planNodeRun(key, spec)
	if err != nil {
		a.fail(w, transformPath{}, status.BadRequest(fmt.Errorf("node run spec: %w", err)))
		return
	}
	run, err := a.startNodeRun(r.Context(), key, plan)
	if err != nil {
		a.fail(w, plan.pipeline, err)
		return
	}
	writeJSON(w, http.StatusOK, run.status())
}

// startNodeRun returns the attempt of key that plan's PUT stands for: the
// one going on, a share that ended, or a new attempt that resumes from the
// journal.
func (a *Agent) startNodeRun(ctx context.Context, key runKey, plan nodeRunPlan) (*nodeRun, error) {
	uid := plan.spec.UID
	// A run being suspended resumes once its workers let go.
	if cur := a.nodeRuns.get(key); cur != nil && cur.plan.spec.UID == uid && cur.stopped.Load() != nil {
		select {
		case <-cur.done:
		case <-ctx.Done():
			return nil, status.With(http.StatusServiceUnavailable, fmt.Errorf("run %s is still stopping; retry", key))
		}
	}
	a.nodeRuns.starting.Lock()
	defer a.nodeRuns.starting.Unlock()
	if cur := a.nodeRuns.get(key); cur != nil {
		switch {
		case cur.plan.spec.UID != uid && !cur.ended():
			return nil, status.With(http.StatusConflict, fmt.Errorf(
				"run %s of uid %s is going on on this node; DELETE it and wait for it to stop before starting uid %s", key, cur.plan.spec.UID, uid))
		case cur.plan.spec.UID == uid && !cur.ended():
			return cur, nil
		case cur.plan.spec.UID == uid && cur.status().Phase != etlv1alpha1.RunSuspended:
			return cur, nil // its share ended
		}
	}
	targets, err := a.resolve(ctx, plan.pipeline)
	if err != nil {
		return nil, err
	}
	if err := a.limits.admitRun(plan.spec.Workers); err != nil {
		return nil, err
	}
	run, err := a.newNodeRun(key, plan, targets)
	if err != nil {
		a.limits.releaseRun(plan.spec.Workers)
		return nil, err
	}
	a.nodeRuns.put(run)
	a.panics.GoSafe("node run", run.execute)
	return run, nil
}
