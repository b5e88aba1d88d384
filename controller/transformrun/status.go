package transformrun

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// sumCounts adds up the nodes' counts.
func sumCounts(nodes []v1alpha1.RunNodeStatus) v1alpha1.RunCounts {
	var t v1alpha1.RunCounts
	for _, n := range nodes {
		t.PlannedObjects += n.PlannedObjects
		t.PlannedBytes += n.PlannedBytes
		t.DoneObjects += n.DoneObjects
		t.DoneBytes += n.DoneBytes
		t.FailedObjects += n.FailedObjects
		t.SkippedObjects += n.SkippedObjects
	}
	return t
}

// runPhase is where the run stands given its nodes' shares, with the reason and message of a
// finished run's condition. Failed nodes fail it as spec.continueOnError says; once every node
// has finished, it fails, listing what failed, if any node or any object did: a run that did
// not transform everything it found is not a success, and Failed is what pipelines waiting on
// the run check. Suspended waits for suspendReached.
func runPhase(spec *v1alpha1.TransformRunSpec, nodes []v1alpha1.RunNodeStatus, totals v1alpha1.RunCounts) (phase v1alpha1.RunPhase, reason, message string) {
	var failed []string
	done := 0
	for _, n := range nodes {
		if n.Phase == v1alpha1.RunFailed {
			failed = append(failed, cmp.Or(n.Message, "node "+n.Node+" failed"))
		}
		if finished(n.Phase) {
			done++
		}
	}
	switch {
	case nodeFailuresFailRun(spec, len(failed), done, len(nodes)):
		return v1alpha1.RunFailed, v1alpha1.RunReasonNodeFailed, strings.Join(failed, "; ")
	case len(nodes) > 0 && done == len(nodes) && totals.FailedObjects > 0:
		return v1alpha1.RunFailed, v1alpha1.RunReasonObjectsFailed, fmt.Sprintf("%d of %d objects failed; status.errors lists the latest, the error manifest in each node's destination all of them",
			totals.FailedObjects, totals.PlannedObjects)
	case len(nodes) > 0 && done == len(nodes):
		return v1alpha1.RunSucceeded, v1alpha1.RunReasonCompleted, fmt.Sprintf("%d objects transformed on %d nodes", totals.DoneObjects+totals.SkippedObjects, len(nodes))
	case suspendReached(spec, nodes):
		return v1alpha1.RunSuspended, v1alpha1.RunReasonSuspended, "spec.suspend is true: the nodes stopped after their current object"
	case !slices.ContainsFunc(nodes, func(n v1alpha1.RunNodeStatus) bool { return n.Phase != v1alpha1.RunPending }):
		return v1alpha1.RunPending, "", ""
	}
	return v1alpha1.RunRunning, "", ""
}

// setConditions keeps Complete, Failed and Suspended in line with the phase. Suspended turns
// False (Resumed) rather than vanishing, so its transition time marks the resume.
func setConditions(st *v1alpha1.TransformRunStatus, reason, message string, generation int64, now time.Time) {
	set := func(typ string, status metav1.ConditionStatus, reason, message string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message,
			ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now)})
	}
	switch st.Phase {
	case v1alpha1.RunSucceeded:
		set(v1alpha1.RunConditionComplete, metav1.ConditionTrue, reason, message)
	case v1alpha1.RunFailed:
		set(v1alpha1.RunConditionFailed, metav1.ConditionTrue, reason, message)
	case v1alpha1.RunSuspended:
		set(v1alpha1.RunConditionSuspended, metav1.ConditionTrue, reason, message)
		return
	}
	if meta.FindStatusCondition(st.Conditions, v1alpha1.RunConditionSuspended) != nil {
		set(v1alpha1.RunConditionSuspended, metav1.ConditionFalse, v1alpha1.RunReasonResumed, "spec.suspend is false: the nodes resume from their journals")
	}
}

// recentErrors are the most recent failed objects across nodes, at most MaxRunErrors: the
// latest answers of the nodes that answered, and what status held of the others.
func recentErrors(held []v1alpha1.ObjectError, fresh map[string][]v1alpha1.ObjectError) []v1alpha1.ObjectError {
	errs := slices.DeleteFunc(slices.Clone(held), func(e v1alpha1.ObjectError) bool { _, ok := fresh[e.Node]; return ok })
	for node, list := range fresh {
		for _, e := range list {
			e.Node = node
			errs = append(errs, e.Truncated())
		}
	}
	slices.SortStableFunc(errs, func(a, b v1alpha1.ObjectError) int {
		return cmp.Or(a.Time.Compare(b.Time.Time), cmp.Compare(a.Node, b.Node), cmp.Compare(a.Object, b.Object))
	})
	if len(errs) > v1alpha1.MaxRunErrors {
		errs = errs[len(errs)-v1alpha1.MaxRunErrors:]
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// computeStatus is the run's status after a poll of its nodes at now: the nodes' shares, what
// they add up to, where the run stands, and its rate since the previous written status, which
// was sinceWrite ago (0: unknown, the rate stands).
func computeStatus(run *v1alpha1.TransformRun, nodes []v1alpha1.RunNodeStatus, fresh map[string][]v1alpha1.ObjectError, now time.Time, sinceWrite time.Duration) v1alpha1.TransformRunStatus {
	st := *run.Status.DeepCopy()
	st.Nodes = nodes
	st.Totals = sumCounts(nodes)
	st.Errors = recentErrors(run.Status.Errors, fresh)
	st.Progress = progress(st.Totals)
	st.ErrorManifest = wire.ErrorManifest(string(run.UID))
	st.ObservedGeneration = run.Generation
	var reason, message string
	st.Phase, reason, message = runPhase(&run.Spec, nodes, st.Totals)
	var r rates
	switch {
	case finished(st.Phase):
		if st.CompletionTime == nil {
			st.CompletionTime = &metav1.Time{Time: now}
		}
		if st.StartTime != nil {
			r = averageRates(st.Totals, st.CompletionTime.Sub(st.StartTime.Time))
		}
	case st.Phase == v1alpha1.RunRunning:
		prev := rates{objects: float64(run.Status.ObjectsPerSecond), bytes: float64(run.Status.BytesPerSecond)}
		r = recentRates(prev, run.Status.Nodes, nodes, sinceWrite)
	}
	nodeRates(run.Status.Nodes, st.Nodes, sinceWrite)
	st.ObjectsPerSecond, st.BytesPerSecond = int64(math.Round(r.objects)), int64(math.Round(r.bytes))
	st.Rate = rateText(r)
	st.ETA = ""
	if st.Phase == v1alpha1.RunRunning {
		st.ETA = eta(st.Totals, r)
	}
	setConditions(&st, reason, message, run.Generation, now)
	return st
}
