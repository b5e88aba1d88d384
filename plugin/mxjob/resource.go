package mxjob

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// mxJobs is how MxJobs are listed: list, get and wait's watch share it.
var mxJobs = cli.Resource[*v1beta1.MxJob]{
	Plural:  "mxjobs",
	New:     func() *v1beta1.MxJob { return &v1beta1.MxJob{} },
	NewList: func() client.ObjectList { return &v1beta1.MxJobList{} },
	Columns: []metav1.TableColumnDefinition{
		cli.NameColumn,
		{Name: "Mode", Type: "string"},
		{Name: "State", Type: "string"},
		{Name: "Queue", Type: "string", Description: "Kueue's LocalQueue (label kueue.x-k8s.io/queue-name)"},
		{Name: "Workers", Type: "string", Description: "active/desired workers"},
		{Name: "Restarts", Type: "integer"},
		cli.AgeColumn,
		{Name: "Servers", Type: "string", Priority: 1},
		{Name: "Duration", Type: "string", Priority: 1},
		{Name: "Reason", Type: "string", Priority: 1},
	},
	Row: jobRow,
}

func jobRow(j *v1beta1.MxJob, now time.Time) []any {
	return []any{
		j.Name,
		string(j.Spec.JobMode),
		state(j),
		queueName(j),
		replicaCounts(j, v1beta1.ReplicaTypeWorker),
		int64(j.Status.Restarts),
		cli.Age(j.CreationTimestamp, now),
		replicaCounts(j, v1beta1.ReplicaTypeServer),
		runDuration(j, now),
		reason(j),
	}
}

// state is status.state, or Pending before the controller has written any, or Queued while
// Kueue holds the job back.
func state(j *v1beta1.MxJob) string {
	switch {
	case heldByKueue(j) != nil:
		return stateQueued
	case j.Status.State == "":
		return "Pending"
	}
	return string(j.Status.State)
}

// reason is why the job is in its state: for a queued job, why Kueue has not admitted it.
func reason(j *v1beta1.MxJob) string {
	if c := heldByKueue(j); c != nil {
		return waitReason(c)
	}
	return j.Status.Reason
}

// queueName is the job's LocalQueue, "-" when Kueue does not queue it.
func queueName(j *v1beta1.MxJob) string {
	if q := j.Labels[labels.KueueQueueName]; q != "" {
		return q
	}
	return "-"
}

// replicaCounts is "active/desired" for a replica type, "-" when the job has none of it.
func replicaCounts(j *v1beta1.MxJob, t v1beta1.ReplicaType) string {
	rs := j.Spec.ReplicaSpecFor(t)
	if rs == nil {
		return "-"
	}
	var active int32
	if st := j.Status.ReplicaStatuses[t]; st != nil {
		active = st.Active
	}
	return fmt.Sprintf("%d/%d", active, rs.ReplicaCount())
}

// runDuration is how long the job ran (or has run), as kubectl shows a Job's duration.
func runDuration(j *v1beta1.MxJob, now time.Time) string {
	if j.Status.StartTime == nil {
		return "-"
	}
	end := now
	if j.Status.CompletionTime != nil {
		end = j.Status.CompletionTime.Time
	}
	return cli.Age(*j.Status.StartTime, end)
}
