package mxjob

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// suspend deletes every pod of a suspended job. Start time is cleared so that
// activeDeadlineSeconds counts from the resume, as it does for Kubernetes Jobs.
func suspend(pods []corev1.Pod, p *plan, now time.Time) {
	st := &p.status
	for i := range pods {
		if pods[i].DeletionTimestamp == nil {
			p.deletePods = append(p.deletePods, &pods[i])
		}
	}
	st.State, st.Phase, st.StartTime, st.Reason = v1beta1.StateSuspended, v1beta1.PhaseCreating, nil, "suspended by runPolicy.suspend"
	for _, c := range st.ReplicaStatuses {
		c.Active = 0
	}
	if meta.FindStatusCondition(st.Conditions, v1beta1.ConditionRunning) != nil {
		setCondition(st, v1beta1.ConditionRunning, false, v1beta1.ReasonSuspended, "the job is suspended", now)
	}
	setCondition(st, v1beta1.ConditionSuspended, true, v1beta1.ReasonSuspended, "runPolicy.suspend is true; the job's pods are deleted", now)
}

// resume turns Suspended False once runPolicy.suspend is unset, rather than dropping it, so that
// its transition time marks the resume; the pods are then recreated as for a new job.
func resume(st *v1beta1.MxJobStatus, now time.Time) {
	if meta.IsStatusConditionTrue(st.Conditions, v1beta1.ConditionSuspended) {
		setCondition(st, v1beta1.ConditionSuspended, false, v1beta1.ReasonResumed, "the job was resumed", now)
	}
}
