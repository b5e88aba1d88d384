// Package transformrun is the TransformRun controller: it chooses a run's nodes once, hands each
// node's agent its share (api/wire/noderuns.go), follows the shares every few seconds, and
// writes what they add up to into the run's status at a bounded rate.
//
// Deleting a run needs no finalizer: a deleted run's shares are stopped with a best-effort
// DELETE to its agents by the manager that polled it (its shareTracker holds their UID and nodes). A share
// that manager never reached (it failed over, or the agent was unreachable) runs to its end,
// unless a new run of the same name meets it: the agent refuses that run's PUT with 409 and the
// controller stops the orphan first. A finalizer would make every deletion wait on every agent.
package transformrun

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/controller/internal/owned"
)

// Runs, deleted once past their TTL; the Transforms and nodes a run's nodes are chosen from; the
// ObjectStores runs read from, whose specs (never their keys) the agents are sent; the
// agent pods it calls. The agents start and follow runs only for callers whom RBAC lets create
// their runs API (api/wire/noderuns.go), which this role alone grants: both the prefix
// wire.NodeRunsPath and every path under it, whichever the agent asks about.
// +kubebuilder:rbac:groups=etl.mlkube.io,resources=transformruns,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=etl.mlkube.io,resources=transformruns/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=etl.mlkube.io,resources=transforms,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes;pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=etl.mlkube.io,resources=objectstores,verbs=get;list;watch
// +kubebuilder:rbac:urls=/v1/runs;/v1/runs/*,verbs=create

// Defaults of the Reconciler's timing.
const (
	DefaultPoll           = 3 * time.Second
	DefaultGrace          = 2 * time.Minute
	DefaultStatusInterval = 2 * time.Second
)

// concurrentRuns is how many runs are polled at once: a poll waits on agents, an unreachable one
// up to the HTTP timeout, and one slow node must not hold up every other run.
const concurrentRuns = 4

// Reconciler runs TransformRuns.
type Reconciler struct {
	client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	Agents   *Agents
	// Poll is how often a running run's agents are asked (DefaultPoll).
	Poll time.Duration
	// Grace is how long a node's agent may not answer before its share fails (DefaultGrace).
	Grace time.Duration
	// StatusInterval is the least time between two status writes of a run that changed only its
	// counts (DefaultStatusInterval); phase changes are written at once.
	StatusInterval time.Duration

	tracker shareTracker
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the controller. Only spec changes (suspend) and deletions wake it:
// its own status writes must not, or every write would poll the agents again at once.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	r.Poll = cmpOr(r.Poll, DefaultPoll)
	r.Grace = cmpOr(r.Grace, DefaultGrace)
	r.StatusInterval = cmpOr(r.StatusInterval, DefaultStatusInterval)
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.TransformRun{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: concurrentRuns}).
		Named("transformrun").
		Complete(r)
}

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Reconcile polls a run until it finishes, then deletes it once its TTL has passed: it gathers
// what the run's agents say (observe), computePlan decides, then the status is written once and
// the run deleted or polled again.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var run v1alpha1.TransformRun
	if err := r.Get(ctx, req.NamespacedName, &run); err != nil {
		if apierrors.IsNotFound(err) {
			r.stopDeleted(ctx, req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if run.DeletionTimestamp != nil {
		r.stopDeleted(ctx, req.NamespacedName)
		return reconcile.Result{}, nil
	}
	now := r.Clock.Now()
	polling := !finished(run.Status.Phase)
	var obs observed
	if polling {
		var err error
		if obs, err = r.observe(ctx, &run, now); err != nil {
			return reconcile.Result{}, err
		}
	} else {
		r.tracker.forget(req.NamespacedName)
	}
	p := computePlan(&run, obs, now, timing{poll: r.Poll, statusInterval: r.StatusInterval})
	if p.writeStatus {
		if err := r.writeStatus(ctx, &run, p.status); err != nil {
			return reconcile.Result{}, err
		}
	}
	if polling {
		r.tracker.record(req.NamespacedName, run.UID, obs.nodes, p.writeStatus, now)
	}
	if p.deleteRun {
		log.FromContext(ctx).V(2).Info("deleting TransformRun past its ttlSecondsAfterFinished")
		err := r.Delete(ctx, &run, client.Preconditions{UID: &run.UID}, client.PropagationPolicy(metav1.DeletePropagationBackground))
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	return reconcile.Result{RequeueAfter: p.requeueAfter}, nil
}

// observe chooses the nodes of a starting run and polls its shares. A starting run's start time
// is set on the reconcile's copy before its agents are first asked: their grace period runs from
// it.
func (r *Reconciler) observe(ctx context.Context, run *v1alpha1.TransformRun, now time.Time) (observed, error) {
	agents, err := r.Agents.Ready(ctx)
	if err != nil {
		return observed{}, err
	}
	nodes := run.Status.Nodes
	if len(nodes) == 0 && !run.Spec.Suspend {
		chosen, err := r.choose(ctx, run, agents)
		if err != nil {
			return observed{}, err
		}
		nodes = pendingNodes(chosen)
		if len(nodes) > 0 {
			run.Status.StartTime = &metav1.Time{Time: now}
		}
	}
	tracked, _ := r.tracker.lookup(client.ObjectKeyFromObject(run))
	obs := r.poll(ctx, run, nodes, agents, now, tracked)
	obs.sinceWrite = tracked.sinceWrite(run.UID, now)
	obs.recent = tracked.ratesSince(run.UID, obs.nodes, now)
	return obs, nil
}

// writeStatus replaces the run's status, and records an event when its phase changed. An update,
// not a patch: a status computed from a stale copy is refused, and the next poll starts over.
func (r *Reconciler) writeStatus(ctx context.Context, run *v1alpha1.TransformRun, next v1alpha1.TransformRunStatus) error {
	old := run.Status.Phase
	run.Status = next
	if err := r.Status().Update(ctx, run); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	log.FromContext(ctx).V(2).Info("wrote TransformRun status", "phase", next.Phase, "progress", next.Progress)
	if old != next.Phase {
		warning, reason, message := phaseEvent(old, &next)
		owned.Owner{Recorder: r.Recorder, Object: run}.Event(warning, reason, message)
	}
	return nil
}

// phaseEvent is the event of a phase change.
func phaseEvent(old v1alpha1.RunPhase, st *v1alpha1.TransformRunStatus) (warning bool, reason, message string) {
	for _, c := range st.Conditions {
		if c.Status == metav1.ConditionTrue && (c.Type == v1alpha1.RunConditionFailed || c.Type == v1alpha1.RunConditionComplete || c.Type == v1alpha1.RunConditionSuspended) {
			return c.Type == v1alpha1.RunConditionFailed, c.Reason, c.Message
		}
	}
	if old == v1alpha1.RunSuspended {
		return false, v1alpha1.RunReasonResumed, "resumed on " + fmt.Sprint(len(st.Nodes)) + " nodes"
	}
	return false, string(st.Phase), fmt.Sprintf("%s on %d nodes", st.Phase, len(st.Nodes))
}

// stopDeleted stops, best effort, the shares of a deleted run this manager polled.
func (r *Reconciler) stopDeleted(ctx context.Context, key types.NamespacedName) {
	tracked, ok := r.tracker.lookup(key)
	if !ok {
		return
	}
	r.tracker.forget(key)
	run := &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: tracked.uid}}
	run.Spec.Suspend = true
	nodes := pendingNodes(tracked.nodes)
	agents, err := r.Agents.Ready(ctx)
	if err != nil {
		log.FromContext(ctx).V(1).Info("cannot stop a deleted run's shares", "error", err)
		return
	}
	r.poll(ctx, run, nodes, agents, r.Clock.Now(), tracked)
}
