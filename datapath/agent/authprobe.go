package agent

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mlkube/mlkube/api/wire"
)

// PathAuthProbe is what the agent asks a transformer without the credential before using it
// (Options.RequireTransformerAuth): a transformer that answers it below 400 answers anyone who
// reaches it, and the agent will not hand it a namespace's objects.
const PathAuthProbe = "/mlkube-auth-probe"

// probeTimeout bounds one probe: the transformer is Ready, so it answers at once or not at all.
const probeTimeout = 5 * time.Second

// maxProbeVerdicts bounds the verdicts kept: one per transformer pod of the node, so a full cache
// means pods came and went; it is emptied and transformers are probed again.
const maxProbeVerdicts = 4096

// probingResolver is a Resolver whose Targets have each refused a request without the
// credential: the wire contract's one rule (docs/transforms.md#credential), which transformers
// not built on the SDK must keep by themselves. A verdict holds for the pod at that address;
// a new pod, or the pod at a new address, is probed again.
type probingResolver struct {
	next Resolver
	// probe sends the probe to the transformer at url and returns the answer's status.
	probe func(ctx context.Context, url string) (int, error)

	mu       sync.Mutex
	verdicts map[probeKey]bool // true: it refused the probe, and may be used
}

type probeKey struct{ pod, url string }

// Lookup implements Resolver.
func (r *probingResolver) Lookup(ctx context.Context, namespace, name string) (Target, error) {
	t, err := r.next.Lookup(ctx, namespace, name)
	if err != nil {
		return Target{}, err
	}
	key := probeKey{t.Pod, t.URL}
	r.mu.Lock()
	closed, known := r.verdicts[key]
	r.mu.Unlock()
	if !known {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		status, err := r.probe(pctx, t.URL)
		cancel()
		if err != nil {
			return Target{}, &NotRunningError{Reason: fmt.Sprintf(
				"transformer %s did not answer whether it checks the agent's credential (%s %s): %v", t.Pod, http.MethodPut, PathAuthProbe, err)}
		}
		closed = status >= 400
		r.remember(key, closed)
	}
	if !closed {
		return Target{}, &NotRunningError{Reason: fmt.Sprintf(
			"transformer %s answers requests without the agent's credential (%s); see docs/transforms.md#credential", t.Pod, wire.HeaderTransformerToken)}
	}
	return t, nil
}

func (r *probingResolver) remember(key probeKey, closed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.verdicts == nil || len(r.verdicts) >= maxProbeVerdicts {
		r.verdicts = map[probeKey]bool{}
	}
	r.verdicts[key] = closed
}

// probeTransformer sends PathAuthProbe to the transformer at base without the credential, with
// an empty body, and returns the answer's status.
func (a *Agent) probeTransformer(ctx context.Context, base string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+PathAuthProbe, http.NoBody)
	if err != nil {
		return 0, err
	}
	resp, err := a.transformers.Do(req)
	if err != nil {
		return 0, err
	}
	// A bounded drain keeps the connection for the objects that follow.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, errorDrainLimit))
	resp.Body.Close()
	return resp.StatusCode, nil
}
