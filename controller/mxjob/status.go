package mxjob

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// running sets the conditions of a job still in progress.
func running(st *v1beta1.MxJobStatus, pending bool, restarting []string, now time.Time) {
	switch {
	case len(restarting) > 0:
		st.Phase = v1beta1.PhaseRunning
		setCondition(st, v1beta1.ConditionRestarting, true, v1beta1.ReasonReplicaRestarting, fmt.Sprintf("recreating failed %v", restarting), now)
		setCondition(st, v1beta1.ConditionRunning, false, v1beta1.ReasonReplicaRestarting, fmt.Sprintf("recreating failed %v", restarting), now)
	case pending:
		st.Phase = v1beta1.PhaseCreating
	default:
		st.Phase = v1beta1.PhaseRunning
		setCondition(st, v1beta1.ConditionRunning, true, v1beta1.ReasonAllReplicasRunning, "every replica's pod is running", now)
		if meta.FindStatusCondition(st.Conditions, v1beta1.ConditionRestarting) != nil {
			setCondition(st, v1beta1.ConditionRestarting, false, v1beta1.ReasonAllReplicasRunning, "every replica's pod is running", now)
		}
	}
}

// finish records the job's outcome. The outcome condition is set last and Running is turned
// False, so a finished job never shows Running as its latest condition.
func finish(job *v1beta1.MxJob, p *plan, success bool, reason, message string, now time.Time) {
	st := &p.status
	st.Reason = message
	st.CompletionTime = &metav1.Time{Time: now}
	p.requeueAfter = 0 // backoffs and deadlines of a running job no longer apply
	for _, c := range []string{v1beta1.ConditionRunning, v1beta1.ConditionRestarting} {
		if meta.FindStatusCondition(st.Conditions, c) != nil {
			setCondition(st, c, false, reason, message, now)
		}
	}
	if success {
		st.State, st.Phase = v1beta1.StateSucceeded, v1beta1.PhaseDone
		setCondition(st, v1beta1.ConditionSucceeded, true, reason, message, now)
	} else {
		st.State, st.Phase = v1beta1.StateFailed, v1beta1.PhaseFailed
		setCondition(st, v1beta1.ConditionFailed, true, reason, message, now)
	}
	requeueForTTL(job, p)
}

func finished(st *v1beta1.MxJobStatus) bool {
	return meta.IsStatusConditionTrue(st.Conditions, v1beta1.ConditionSucceeded) ||
		meta.IsStatusConditionTrue(st.Conditions, v1beta1.ConditionFailed)
}

func setCondition(st *v1beta1.MxJobStatus, typ string, status bool, reason, message string, now time.Time) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: message,
		ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(now),
	})
}
