package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/noderun"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/status"
)

// The manager's node runs API (api/wire/noderuns.go):
//
//	PUT    /v1/runs/{namespace}/{run}        NodeRunSpec → 200 NodeRunStatus
//	GET    /v1/runs/{namespace}/{run}?uid=U  → 200 NodeRunStatus, 404 when the agent holds no such run
//	DELETE /v1/runs/{namespace}/{run}?uid=U  suspends the run → 200 NodeRunStatus

// maxNodeRunSpec bounds the JSON of a NodeRunSpec: a list source of
// etlv1alpha1.MaxRunObjects names of wire.MaxObjectName bytes, quoted, the
// run's nodes, and a store's CA bundle, escaped.
const maxNodeRunSpec = etlv1alpha1.MaxRunObjects*(wire.MaxObjectName+8) + wire.MaxRunNodes*(validation.DNS1123SubdomainMaxLength+3) + 2*etlv1alpha1.MaxCABundleBytes + 64<<10

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
		run := a.runs.Get(key)
		if uid := r.URL.Query().Get("uid"); run == nil || (uid != "" && uid != run.UID()) {
			a.fail(w, transformPath{}, status.NotFound(fmt.Errorf("this node holds no run %s with uid %q; PUT starts or resumes it", key, uid)))
			return
		}
		if r.Method == http.MethodDelete {
			run.Suspend()
		}
		writeJSON(w, http.StatusOK, run.Status())
	default:
		w.Header().Set("Allow", "GET, PUT, DELETE")
		a.fail(w, transformPath{}, status.With(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed on %s{namespace}/{run}", r.Method, wire.NodeRunsPath)))
	}
}

// parseRunPath parses /v1/runs/{namespace}/{run}. Neither may be escaped:
// valid names have nothing to escape.
func parseRunPath(escaped string) (noderun.Key, error) {
	ns, name, ok := strings.Cut(strings.TrimPrefix(escaped, wire.NodeRunsPath), "/")
	if !ok {
		return noderun.Key{}, fmt.Errorf("path %q: want %s{namespace}/{run}", escaped, wire.NodeRunsPath)
	}
	k := noderun.Key{Namespace: ns, Name: name}
	return k, noderun.CheckKey(k)
}

// putNodeRun answers PUT: it starts the run, resumes it, or answers the one
// going on.
func (a *Agent) putNodeRun(w http.ResponseWriter, r *http.Request, key noderun.Key) {
	var spec wire.NodeRunSpec
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, int64(maxNodeRunSpec)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		a.fail(w, transformPath{}, status.BadRequest(fmt.Errorf("node run spec: %w", err)))
		return
	}
	plan, err := a.runs.Plan(key, spec)
	if err != nil {
		a.fail(w, transformPath{}, status.BadRequest(fmt.Errorf("node run spec: %w", err)))
		return
	}
	run, err := a.runs.Start(r.Context(), key, plan)
	if err != nil {
		a.fail(w, transformPath{namespace: key.Namespace, pipeline: plan.Stages()}, err)
		return
	}
	writeJSON(w, http.StatusOK, run.Status())
}
