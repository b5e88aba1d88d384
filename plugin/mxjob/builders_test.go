package mxjob

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

// jobBuilder makes MxJobs for tests, as Kueue's builders do.
type jobBuilder struct{ v1beta1.MxJob }

func makeJob(name string, age time.Duration) *jobBuilder {
	j := &jobBuilder{v1beta1.MxJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, CreationTimestamp: metav1.NewTime(clitest.Now.Add(-age))},
		Spec: v1beta1.MxJobSpec{JobMode: v1beta1.DistMode, ReplicaSpecs: []v1beta1.ReplicaSpec{
			makeReplicaSpec(v1beta1.ReplicaTypeScheduler, 1), makeReplicaSpec(v1beta1.ReplicaTypeServer, 1), makeReplicaSpec(v1beta1.ReplicaTypeWorker, 2),
		}},
	}}
	return j
}

func makeReplicaSpec(t v1beta1.ReplicaType, n int32) v1beta1.ReplicaSpec {
	return v1beta1.ReplicaSpec{MxReplicaType: t, Replicas: ptr.To(n), Template: &corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mxnet", Image: "mxnet:1.9"}}},
	}}
}

func (j *jobBuilder) ns(ns string) *jobBuilder { j.Namespace = ns; return j }

func (j *jobBuilder) state(s v1beta1.State, reason string) *jobBuilder {
	j.Status.State, j.Status.Reason = s, reason
	return j
}

// suspended is a job runPolicy.suspend stopped, as the controller leaves it.
func (j *jobBuilder) suspended() *jobBuilder {
	j.Spec.RunPolicy.Suspend = ptr.To(true)
	return j.state(v1beta1.StateSuspended, "suspended by runPolicy.suspend")
}

func (j *jobBuilder) active(t v1beta1.ReplicaType, n int32) *jobBuilder {
	if j.Status.ReplicaStatuses == nil {
		j.Status.ReplicaStatuses = map[v1beta1.ReplicaType]*v1beta1.ReplicaStatus{}
	}
	j.Status.ReplicaStatuses[t] = &v1beta1.ReplicaStatus{Active: n}
	return j
}

func (j *jobBuilder) started(ago time.Duration) *jobBuilder {
	j.Status.StartTime = ptr.To(metav1.NewTime(clitest.Now.Add(-ago)))
	return j
}

// queue labels the job for Kueue: its LocalQueue and, when not empty, its WorkloadPriorityClass.
func (j *jobBuilder) queue(name, priorityClass string) *jobBuilder {
	j.Labels = map[string]string{labels.KueueQueueName: name}
	if priorityClass != "" {
		j.Labels[labels.KueuePriorityClass] = priorityClass
	}
	return j
}

// admitted sets the Admitted condition the controller writes for a queued job.
func (j *jobBuilder) admitted(status metav1.ConditionStatus, reason, message string) *jobBuilder {
	meta.SetStatusCondition(&j.Status.Conditions, metav1.Condition{Type: v1beta1.ConditionAdmitted, Status: status, Reason: reason,
		Message: message, LastTransitionTime: metav1.NewTime(clitest.Now.Add(-2 * time.Minute))})
	return j
}

func (j *jobBuilder) obj() *v1beta1.MxJob { return j.DeepCopy() }

func makePod(job, typ string, index int, node string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: job + "-" + typ + "-" + string(rune('0'+index)),
			CreationTimestamp: metav1.NewTime(clitest.Now.Add(-30 * time.Minute)),
			Labels:            map[string]string{v1beta1.LabelJobName: job, v1beta1.LabelReplicaType: typ, v1beta1.LabelReplicaIndex: string(rune('0' + index))},
		},
		Spec:   corev1.PodSpec{NodeName: node},
		Status: corev1.PodStatus{Phase: phase},
	}
}
