package transformrun

import (
	"time"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// observed is what a reconcile gathered of a run still going: its nodes' shares after this poll
// of their agents, the object errors of the agents that answered (by node), and how long ago this
// manager last wrote the run's status (0: unknown).
type observed struct {
	nodes      []v1alpha1.RunNodeStatus
	fresh      map[string][]v1alpha1.ObjectError
	sinceWrite time.Duration
}

// plan is what one reconcile does after its poll: the status to write if writeStatus, then the
// run's deletion, or when to come back.
type plan struct {
	status       v1alpha1.TransformRunStatus
	writeStatus  bool
	deleteRun    bool
	requeueAfter time.Duration
}

// timing is how often a reconcile polls a running run, and the least time between two status
// writes that change only its counts (the Reconciler's Poll and StatusInterval).
type timing struct {
	poll, statusInterval time.Duration
}

// computePlan decides one reconcile of a run from what was observed of it and the time: a pure
// function, as the MxJob's and Transform's are. A finished run was not polled (obs is empty) and
// waits only for its TTL. A run still going gets the status its nodes' shares add up to, written
// as shouldWrite says, and comes back after a poll interval, or once finished by this poll, after
// its TTL. The poll's calls to the agents are the reconcile's, made before computePlan as an
// MxJob's creations are: the status reports what the agents answered.
func computePlan(run *v1alpha1.TransformRun, obs observed, now time.Time, every timing) plan {
	p := plan{status: run.Status}
	if !finished(run.Status.Phase) {
		p.status = computeStatus(run, obs.nodes, obs.fresh, now, obs.sinceWrite)
		p.writeStatus = shouldWrite(&run.Status, &p.status, obs.sinceWrite, every.statusInterval)
		if !finished(p.status.Phase) {
			p.requeueAfter = every.poll
			return p
		}
	}
	ttlAfterFinished(run.Spec.TTLSecondsAfterFinished, &p, now)
	return p
}
