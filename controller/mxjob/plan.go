package mxjob

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/internal/owned"
)

// plan is what one reconcile does: the status to write, then the changes to make.
type plan struct {
	status         v1beta1.MxJobStatus
	createPods     []replica
	createServices []replica
	// deletePods run only after the status is written: a retried pod's count must be persisted
	// before the pod goes.
	deletePods     []*corev1.Pod
	deleteServices []string
	deleteJob      bool
	requeueAfter   time.Duration
	// events are the pod-level failures noticed (transitions of the job are derived from conditions).
	events []owned.Event
}

// computePlan decides one reconcile from the job, the pods and Services it owns, and the time.
// It is a pure function: every policy is decided here, each by the file named for its spec field
// (restart_policy.go, backoff_limit.go, active_deadline.go, success_policy.go, suspend.go,
// clean_pod_policy.go, ttl_after_finished.go).
func computePlan(job *v1beta1.MxJob, pods []corev1.Pod, services []corev1.Service, now time.Time) plan {
	p := plan{status: *job.Status.DeepCopy()}
	st := &p.status
	st.ObservedGeneration = job.Generation

	byName := map[string]*corev1.Pod{}
	for i := range pods {
		byName[pods[i].Name] = &pods[i]
	}
	// A finished job never starts pods again, whatever happens to them: its status is read from
	// the cache, which only moves forward, so a stale read can never resurrect it.
	if finished(&job.Status) {
		cleanUp(job, pods, services, &p)
		ttlAfterFinished(job, &p, now)
		return p
	}
	setCondition(st, v1beta1.ConditionCreated, true, v1beta1.ReasonCreated, "the job was accepted", now)
	if job.Spec.RunPolicy.Suspended() {
		suspend(pods, &p, now)
		return p
	}
	resume(st, now)
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Time: now}
	}
	st.State, st.Reason = v1beta1.StateRunning, ""

	counts := map[v1beta1.ReplicaType]*v1beta1.ReplicaStatus{}
	liveRestarts, pending, restarting := int32(0), false, []string{}
	var failure string
	for _, r := range replicasOf(job) {
		c := counts[r.Type]
		if c == nil {
			c = &v1beta1.ReplicaStatus{}
			counts[r.Type] = c
		}
		if !hasService(services, replicaName(job.Name, r)) {
			p.createServices = append(p.createServices, r)
		}
		pod := byName[replicaName(job.Name, r)]
		if pod == nil {
			p.createPods = append(p.createPods, r)
			pending = true
			continue
		}
		switch pod.Status.Phase {
		case corev1.PodSucceeded:
			c.Succeeded++
		case corev1.PodFailed:
			c.Failed++
			code := exitCode(pod)
			if permanent, why := permanentFailure(job.Spec.ReplicaSpecFor(r.Type).RestartPolicy, code); permanent {
				if failure == "" {
					failure = fmt.Sprintf("%s failed: %s", r, why)
				}
				p.events = append(p.events, owned.Event{Warning: true, Reason: v1beta1.ReasonReplicaFailed, Message: fmt.Sprintf("%s failed: %s", r, why)})
				continue
			}
			restarting = append(restarting, r.String())
			retryFailedPod(pod, r, code, &p, now)
		default:
			c.Active++
			// An empty phase is a pod the API server has just stored: not running yet.
			if pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "" || pod.DeletionTimestamp != nil {
				pending = true
			}
			for _, cs := range pod.Status.ContainerStatuses {
				liveRestarts += cs.RestartCount
			}
		}
	}
	st.ReplicaStatuses = counts
	pruneRestartingPods(st, pods)

	overLimit, overLimitWhy := backoffLimitExceeded(job, st.Restarts+liveRestarts)
	overDeadline, overDeadlineWhy, deadlineLeft := activeDeadline(job, st.StartTime.Time, now)
	switch {
	case failure != "":
		finish(job, &p, false, v1beta1.ReasonReplicaFailed, failure, now)
	case overLimit:
		finish(job, &p, false, v1beta1.ReasonBackoffLimitExceeded, overLimitWhy, now)
	case overDeadline:
		finish(job, &p, false, v1beta1.ReasonDeadlineExceeded, overDeadlineWhy, now)
	default:
		if ok, why := succeeded(job, counts); ok {
			finish(job, &p, true, v1beta1.ReasonSucceeded, why, now)
			break
		}
		running(st, pending, restarting, now)
		if deadlineLeft > 0 {
			p.requeue(deadlineLeft)
		}
	}
	if finished(st) {
		// Cleaning up waits for the next reconcile, when the cache shows the job finished.
		p.createPods, p.createServices, p.deletePods = nil, nil, nil
	}
	return p
}

// requeue asks for a reconcile after the delay, unless one comes sooner already.
func (p *plan) requeue(after time.Duration) {
	p.requeueAfter = owned.Sooner(p.requeueAfter, after)
}

func hasService(services []corev1.Service, name string) bool {
	return slices.ContainsFunc(services, func(s corev1.Service) bool { return s.Name == name })
}
