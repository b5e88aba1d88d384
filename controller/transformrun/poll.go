package transformrun

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// parallelNodes bounds the agents one poll calls at once.
const parallelNodes = 32

// choose picks a starting run's nodes (chooseNodes) from the cluster's nodes, agents and the
// Transforms of the run's namespace.
func (r *Reconciler) choose(ctx context.Context, run *v1alpha1.TransformRun, agents map[string]string) ([]string, error) {
	var nodes corev1.NodeList
	if len(run.Spec.NodeSelector) > 0 {
		if err := r.List(ctx, &nodes); err != nil {
			return nil, err
		}
	}
	transforms := map[string]*v1alpha1.Transform{}
	for _, s := range wire.SplitPipeline(run.Spec.Transform) {
		if s == "" {
			continue // a copy
		}
		var t v1alpha1.Transform
		err := r.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: s}, &t)
		if client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		if err == nil {
			transforms[s] = &t
		}
	}
	chosen := chooseNodes(run, nodes.Items, agents, transforms)
	if len(chosen) == 0 {
		log.FromContext(ctx).V(1).Info("no node is ready for the run yet", "transform", run.Spec.Transform)
	}
	return chosen, nil
}

// poll steps every unfinished share at once and applies what the agents said, a silent agent's
// grace period running from its last answer that status or this manager's tracker holds. It
// returns the nodes' new shares, and by node the per-object errors of the agents that answered and
// whether they listed their whole share (observed's sinceWrite is left to the caller). A failed
// node of a run without continueOnError fails the run, so the shares still going are stopped.
func (r *Reconciler) poll(ctx context.Context, run *v1alpha1.TransformRun, nodes []v1alpha1.RunNodeStatus, agents map[string]string, now time.Time, tracked trackedRun) observed {
	token, tokenErr := r.Agents.token()
	if tokenErr != nil {
		log.FromContext(ctx).Error(tokenErr, "cannot call the node agents", "tokenFile", r.Agents.Token.Path)
	}
	nodes = slices.Clone(nodes)
	spec, specObs := r.shareSpec(ctx, run, nodes)
	obs := make([]*observation, len(nodes))
	step := func(stop bool) {
		var g errgroup.Group
		g.SetLimit(parallelNodes)
		for i, n := range nodes {
			if finished(n.Phase) || (stop && n.Phase == v1alpha1.RunSuspended) {
				continue
			}
			g.Go(func() error {
				o := observation{err: tokenErr}
				switch {
				case tokenErr != nil:
				case stop:
					o = r.Agents.stop(ctx, run, agents[n.Node], token)
				case specObs != nil && !run.Spec.Suspend:
					o = *specObs
				default:
					o = r.Agents.step(ctx, run, &spec, n, agents[n.Node], token)
				}
				obs[i] = &o
				return nil //nolint:nilerr // a failed step is an observation, not the poll's failure
			})
		}
		_ = g.Wait() // every step reports in its observation
	}
	fresh, listed := map[string][]v1alpha1.ObjectError{}, map[string]bool{}
	apply := func(note string) {
		for i, o := range obs {
			if o == nil {
				continue
			}
			since := unreachableSince(&run.Status, nodes[i])
			if seen := tracked.lastSeen(run.UID, nodes[i].Node); seen.After(since) {
				since = seen
			}
			nodes[i] = applyObservation(nodes[i], *o, now, since, r.Grace, run.Spec.Suspend || note != "")
			if o.answer != nil {
				fresh[nodes[i].Node] = o.answer.Errors
				listed[nodes[i].Node] = o.answer.Listed
			}
			if note != "" {
				nodes[i].Message = note
			}
			obs[i] = nil
		}
	}
	step(false)
	apply("")
	if failed := failureStopsRun(&run.Spec, nodes); failed != "" {
		step(true)
		apply(fmt.Sprintf("stopped: the run failed on node %s", failed))
	}
	return observed{nodes: nodes, fresh: fresh, listed: listed}
}

// shareSpec is the share every node's PUT carries. A store that cannot be read gives the
// observation every share gets instead: one that does not exist fails the run.
func (r *Reconciler) shareSpec(ctx context.Context, run *v1alpha1.TransformRun, nodes []v1alpha1.RunNodeStatus) (wire.NodeRunSpec, *observation) {
	src, obs := r.store(ctx, run.Namespace, "spec.source.store", run.Spec.Source.Store)
	if obs != nil {
		return wire.NodeRunSpec{}, obs
	}
	dst, obs := r.store(ctx, run.Namespace, "spec.destination.store", run.Spec.Destination.Store)
	if obs != nil {
		return wire.NodeRunSpec{}, obs
	}
	return nodeRunSpec(run, nodes, src, dst), nil
}

// store reads the ObjectStore name of namespace ns that field names; none when name is empty.
func (r *Reconciler) store(ctx context.Context, ns, field, name string) (*v1alpha1.ObjectStore, *observation) {
	if name == "" {
		return nil, nil
	}
	var store v1alpha1.ObjectStore
	err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &store)
	switch {
	case apierrors.IsNotFound(err):
		return nil, &observation{refused: fmt.Errorf(
			"%s names ObjectStore %s, which namespace %s does not have; create it, or start a run with another store", field, name, ns)}
	case err != nil:
		return nil, &observation{err: fmt.Errorf("reading ObjectStore %s: %w", name, err)}
	}
	return &store, nil
}
