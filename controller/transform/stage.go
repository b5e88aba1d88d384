package transform

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func setStage(st *v1alpha1.TransformStatus, stage v1alpha1.Stage, reason, message string, now time.Time) {
	st.Stage, st.Reason = stage, message
	status := metav1.ConditionFalse
	if stage == v1alpha1.StageRunning {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: status, Reason: reason, Message: message,
		ObservedGeneration: st.ObservedGeneration, LastTransitionTime: metav1.NewTime(now),
	})
}
