package transformrun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/internal/agentclient"
	"github.com/mlkube/mlkube/controller/internal/agentpods"
)

// Agents reaches the node agents' runs API (api/wire/noderuns.go), each agent by its pod's IP.
type Agents struct {
	agentpods.Lister
	Port int
	HTTP *http.Client
	// Token, when set, is presented on every call: agents start runs only for callers whom RBAC
	// lets create the non-resource URL wire.NodeRunsPath, the manager alone.
	Token *agentclient.TokenFile
}

func (a *Agents) token() (string, error) {
	if a.Token == nil {
		return "", nil
	}
	return a.Token.Token()
}

// nodeRunSpec is the share every chosen node gets: the run's spec, its UID keying the journal,
// the run's nodes, and the ObjectStores of a source and a destination in one (src, dst, read by
// the caller).
func nodeRunSpec(run *v1alpha1.TransformRun, nodes []v1alpha1.RunNodeStatus, src, dst *v1alpha1.ObjectStore) wire.NodeRunSpec {
	spec := wire.NodeRunSpec{
		UID: string(run.UID), Pipeline: run.Spec.Transform, Args: run.Spec.Args,
		Source: run.Spec.Source, Destination: run.Spec.Destination,
		Workers: int(ptr.Deref(run.Spec.WorkersPerNode, v1alpha1.DefaultRunWorkersPerNode)),
		DryRun:  run.Spec.DryRun, Check: run.Spec.Check,
		ContinueOnError: run.Spec.ContinueOnError, Overwrite: run.Spec.Overwrite,
	}
	if src != nil {
		spec.SourceStore = &wire.RunStore{Name: src.Name, Spec: src.Spec}
		for _, n := range nodes {
			spec.Nodes = append(spec.Nodes, n.Node)
		}
	}
	if dst != nil {
		spec.DestinationStore = &wire.RunStore{Name: dst.Name, Spec: dst.Spec}
	}
	return spec
}

// call sends one request about the run to the agent at ip: PUT carries the share, spec; GET and
// DELETE name uid, so that an agent holding a namesake of another UID answers 404 (uid "":
// whichever it holds).
func (a *Agents) call(ctx context.Context, method, ip, token string, run *v1alpha1.TransformRun, uid types.UID, spec *wire.NodeRunSpec) (*wire.NodeRunStatus, error) {
	u := agentclient.URL(ip, a.Port, wire.NodeRunsPath+run.Namespace+"/"+run.Name)
	var in any
	if method == http.MethodPut {
		in = spec
	} else {
		u += "?uid=" + url.QueryEscape(string(uid))
	}
	var st wire.NodeRunStatus
	if err := agentclient.Do(ctx, a.HTTP, method, u, token, in, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// step moves a node's share toward the run's spec and reports what its agent said: a share
// never taken or suspended is PUT, a running one is followed with GET and PUT again when its agent
// no longer holds it (restarted, or replaced by a new pod: it resumes from its journal); a
// suspended run's shares are stopped with DELETE.
func (a *Agents) step(ctx context.Context, run *v1alpha1.TransformRun, spec *wire.NodeRunSpec, n v1alpha1.RunNodeStatus, ip, token string) observation {
	if ip == "" {
		return observation{err: fmt.Errorf("no Ready agent pod on node %s", n.Node)}
	}
	if run.Spec.Suspend {
		return a.stop(ctx, run, ip, token)
	}
	if n.Phase == v1alpha1.RunRunning {
		st, err := a.call(ctx, http.MethodGet, ip, token, run, run.UID, nil)
		switch {
		case err == nil && st.Phase != v1alpha1.RunSuspended:
			return observation{answer: st}
		case err != nil && !agentclient.HasStatus(err, http.StatusNotFound):
			return classify(err)
		}
	}
	st, err := a.call(ctx, http.MethodPut, ip, token, run, run.UID, spec)
	if agentclient.HasStatus(err, http.StatusConflict) {
		a.stopOrphan(ctx, run, ip, token)
		return observation{busy: err}
	}
	if err != nil {
		return classify(err)
	}
	return observation{answer: st}
}

// stop asks the agent to stop the share; an agent that holds no such run has nothing running.
func (a *Agents) stop(ctx context.Context, run *v1alpha1.TransformRun, ip, token string) observation {
	st, err := a.call(ctx, http.MethodDelete, ip, token, run, run.UID, nil)
	switch {
	case agentclient.HasStatus(err, http.StatusNotFound):
		return observation{stopped: true}
	case err != nil:
		return observation{err: err}
	}
	return observation{answer: st}
}

// stopOrphan stops the share an agent still runs under this run's name for another UID (the agent
// answers a PUT with 409 while it does). That UID's TransformRun is gone, since this one holds
// its name: it was deleted, and the manager that could have stopped it did not. The next poll's
// PUT starts this run once the orphan has stopped.
func (a *Agents) stopOrphan(ctx context.Context, run *v1alpha1.TransformRun, ip, token string) {
	held, err := a.call(ctx, http.MethodGet, ip, token, run, "", nil)
	if err != nil || held.UID == "" || types.UID(held.UID) == run.UID {
		return
	}
	log.FromContext(ctx).Info("stopping the share of a deleted namesake run", "uid", held.UID, "agent", ip)
	_, _ = a.call(ctx, http.MethodDelete, ip, token, run, types.UID(held.UID), nil) // best effort: the next 409 tries again
}

// classify sorts a failed call: 429 waits, a refused token is a misconfiguration the operator
// can mend within the grace period, any other 4xx is the agent's final word on the share, and
// everything else is the agent being unreachable.
func classify(err error) observation {
	var se *agentclient.StatusError
	switch {
	case agentclient.HasStatus(err, http.StatusTooManyRequests):
		return observation{busy: err}
	case errors.Is(err, agentclient.ErrRefused):
		return observation{err: err}
	case errors.As(err, &se) && se.Code >= 400 && se.Code < 500:
		return observation{refused: err}
	}
	return observation{err: err}
}
