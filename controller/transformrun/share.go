package transformrun

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// observation is what one poll learned of a node's share of the run.
type observation struct {
	// answer is the agent's view of the share, when it gave one.
	answer *wire.NodeRunStatus
	// stopped: asked to stop, the agent held no such run, so nothing runs there.
	stopped bool
	// busy: the agent answered but cannot take the share yet (429, at its cap of runs); the share
	// waits, and since the agent is reachable no grace period runs out.
	busy error
	// refused: the agent will never take the share (a 4xx that no retry mends); it fails.
	refused error
	// err: no answer at all, or no Ready agent pod on the node, or no token to present.
	err error
}

func finished(p v1alpha1.RunPhase) bool { return p == v1alpha1.RunSucceeded || p == v1alpha1.RunFailed }

// pendingNodes are the status entries of nodes just chosen.
func pendingNodes(names []string) []v1alpha1.RunNodeStatus {
	out := make([]v1alpha1.RunNodeStatus, len(names))
	for i, n := range names {
		out[i] = v1alpha1.RunNodeStatus{Node: n, Phase: v1alpha1.RunPending}
	}
	return out
}

// unreachableSince is when the grace period of a node that does not answer began: its agent's
// last answer, or the run's start, or the resume after a suspension, whichever is latest. A
// suspended run does not poll its stopped nodes, so their last answers may be old by the time
// it resumes.
func unreachableSince(st *v1alpha1.TransformRunStatus, n v1alpha1.RunNodeStatus) time.Time {
	var since time.Time
	for _, t := range []*metav1.Time{n.LastSeen, st.StartTime} {
		if t != nil && t.After(since) {
			since = t.Time
		}
	}
	for _, c := range st.Conditions {
		if c.Type == v1alpha1.RunConditionSuspended && c.Status == metav1.ConditionFalse && c.LastTransitionTime.After(since) {
			since = c.LastTransitionTime.Time
		}
	}
	return since
}

// applyObservation updates a node's share with what a poll learned at now. A node that has not
// answered since `since` for longer than grace fails its share with a reason naming the node and
// the time; while the run is suspended nothing runs out, the node is only asked to stop again.
func applyObservation(n v1alpha1.RunNodeStatus, o observation, now, since time.Time, grace time.Duration, suspended bool) v1alpha1.RunNodeStatus {
	seen := metav1.NewTime(now)
	switch {
	case o.answer != nil:
		n.Phase, n.RunCounts, n.Message, n.LastSeen = o.answer.Phase, o.answer.RunCounts, o.answer.Message, &seen
		if n.Phase == "" {
			n.Phase = v1alpha1.RunRunning
		}
	case o.stopped:
		n.Phase, n.Message, n.LastSeen = v1alpha1.RunSuspended, "", &seen
	case o.refused != nil:
		n.Phase, n.Message, n.LastSeen = v1alpha1.RunFailed, fmt.Sprintf("node %s's agent refused the run: %v", n.Node, o.refused), &seen
	case o.busy != nil:
		n.Message, n.LastSeen = fmt.Sprintf("waiting for node %s's agent: %v", n.Node, o.busy), &seen
	case o.err != nil && !suspended && now.Sub(since) > grace:
		n.Phase = v1alpha1.RunFailed
		n.Message = fmt.Sprintf("node %s's agent unreachable since %s (grace period %s): %v", n.Node, since.UTC().Format(time.RFC3339), grace, o.err)
	}
	n.Message = truncate(n.Message)
	return n
}

// truncate cuts a node's message to RunNodeStatus.Message's MaxLength, which is the same 1 KiB
// as an object error's, at a character boundary.
func truncate(s string) string { return v1alpha1.ObjectError{Message: s}.Truncated().Message }
