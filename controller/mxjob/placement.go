package mxjob

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/internal/owned"
)

// agentWait is how long workers of a job with a dataset wait before the controller looks for a
// ready agent again, when no node has one: agents are not the manager's to watch.
const agentWait = 10 * time.Second

// placement is where the pods about to be created go: the replicas to create now, the nodes the
// dataset's workers may run on, and when to look again for the workers held back.
type placement struct {
	create       []replica
	nodes        []string
	requeueAfter time.Duration
}

// placeWorkers finds the nodes whose agent is ready when workers of a job with a dataset are to
// be created. With none, the workers are held back, with a warning event, rather than created on
// nodes where their reads would fail; the other replicas are created all the same.
func (r *Reconciler) placeWorkers(ctx context.Context, o owned.Owner, job *v1beta1.MxJob, create []replica) (placement, error) {
	if !slices.ContainsFunc(create, func(rep replica) bool { return readsDataset(job, rep) }) {
		return placement{create: create}, nil
	}
	agents, err := r.Agents.Ready(ctx)
	if err != nil {
		return placement{}, fmt.Errorf("finding the nodes for the workers of a job with spec.dataset: %w", err)
	}
	if len(agents) > 0 {
		return placement{create: create, nodes: slices.Sorted(maps.Keys(agents))}, nil
	}
	o.Event(true, v1beta1.ReasonNoDatapathAgent, fmt.Sprintf(
		"no node has a Ready data path agent in namespace %s, so the workers could not read spec.dataset; they are created once one is (kubectl -n %s get pods)",
		r.Agents.Namespace, r.Agents.Namespace))
	held := slices.DeleteFunc(slices.Clone(create), func(rep replica) bool { return readsDataset(job, rep) })
	return placement{create: held, requeueAfter: agentWait}, nil
}
