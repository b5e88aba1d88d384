package transformrun

import (
	"time"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// observed is what a reconcile gathered of a run still going: its nodes' shares after this poll
// of their agents; by node the object errors of the agents that answered, whether they listed
// their whole share, and the objects per second each processed since this manager's previous poll;
// and how long ago this manager last wrote the run's status (0: unknown).
type observed struct {
	nodes      []v1alpha1.RunNodeStatus
	fresh      map[string][]v1alpha1.ObjectError
	listed     map[string]bool
	recent     map[string]float64
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
// as shouldWrite says, and comes back when nextPoll says, or once finished by this poll, after
// its TTL. The poll's calls to the agents are the reconcile's, made before computePlan as an
// MxJob's creations are: the status reports what the agents answered.
func computePlan(run *v1alpha1.TransformRun, obs observed, now time.Time, every timing) plan {
	p := plan{status: run.Status}
	if !finished(run.Status.Phase) {
		p.status = computeStatus(run, obs.nodes, obs.fresh, now, obs.sinceWrite)
		p.writeStatus = shouldWrite(&run.Status, &p.status, obs.sinceWrite, every.statusInterval)
		if !finished(p.status.Phase) {
			p.requeueAfter = nextPoll(&p.status, obs.listed, obs.recent, every.poll)
			return p
		}
	}
	ttlAfterFinished(run.Spec.TTLSecondsAfterFinished, &p, now)
	return p
}

// nextPoll is when a run still going is polled again: after the interval, or sooner when every
// node's share is running, was listed to its end and has a rate, and the last of them should end
// before then at that rate, so that the run's end is seen when it comes rather than up to an
// interval later. A node's rate is the faster of its rate since the previous poll (recent, by
// node) and its status's, which is smoothed over many polls and lags behind a share that sped up
// after its start. Never sooner than a tenth of the interval: an estimate that is off costs a few
// polls more, not a loop of them.
func nextPoll(st *v1alpha1.TransformRunStatus, listed map[string]bool, recent map[string]float64, interval time.Duration) time.Duration {
	if st.Phase != v1alpha1.RunRunning {
		return interval
	}
	var last time.Duration
	for _, n := range st.Nodes {
		rate := max(recent[n.Node], float64(n.ObjectsPerSecond))
		switch {
		case finished(n.Phase):
			continue
		case n.Phase != v1alpha1.RunRunning || !listed[n.Node] || rate <= 0:
			return interval
		}
		last = max(last, time.Duration(float64(n.Left())/rate*float64(time.Second)))
	}
	return min(max(last, interval/10), interval)
}
