package mxjob

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// Recreation backoff after a failed pod: baseBackoff doubled per restart, capped at maxBackoff,
// counted from the moment the pod failed (the Sedna controllers' per-key exponential backoff,
// derived from cluster state so it survives a manager restart).
const (
	baseBackoff = 5 * time.Second
	maxBackoff  = 5 * time.Minute
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
	events []event
}

type event struct {
	warning bool
	reason  string
	message string
}

// computePlan decides one reconcile from the job, the pods and Services it owns, and the time.
// It is a pure function: every run policy is decided here.
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
		cleanUp(job, pods, services, &p, now)
		return p
	}
	setCondition(st, v1beta1.ConditionCreated, true, "MxJobCreated", "the job was accepted", now)
	if job.Spec.RunPolicy.Suspend != nil && *job.Spec.RunPolicy.Suspend {
		suspend(pods, &p, now)
		return p
	}
	if meta.IsStatusConditionTrue(st.Conditions, v1beta1.ConditionSuspended) {
		setCondition(st, v1beta1.ConditionSuspended, false, "Resumed", "the job was resumed", now)
	}
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
			if permanent, why := permanentFailure(replicaSpec(job, r.Type).RestartPolicy, code); permanent {
				if failure == "" {
					failure = fmt.Sprintf("%s failed: %s", r, why)
				}
				p.events = append(p.events, event{warning: true, reason: "ReplicaFailed", message: fmt.Sprintf("%s failed: %s", r, why)})
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

	rp := job.Spec.RunPolicy
	switch {
	case failure != "":
		finish(job, &p, false, "ReplicaFailed", failure, now)
	case rp.BackoffLimit != nil && st.Restarts+liveRestarts > *rp.BackoffLimit:
		finish(job, &p, false, "BackoffLimitExceeded", fmt.Sprintf(
			"%d restarts exceed runPolicy.backoffLimit %d", st.Restarts+liveRestarts, *rp.BackoffLimit), now)
	case rp.ActiveDeadlineSeconds != nil && now.Sub(st.StartTime.Time) >= time.Duration(*rp.ActiveDeadlineSeconds)*time.Second:
		finish(job, &p, false, "DeadlineExceeded", fmt.Sprintf(
			"the job ran longer than runPolicy.activeDeadlineSeconds (%ds)", *rp.ActiveDeadlineSeconds), now)
	default:
		if ok, why := succeeded(job, counts); ok {
			finish(job, &p, true, "Succeeded", why, now)
			break
		}
		running(st, pending, restarting, now)
		if rp.ActiveDeadlineSeconds != nil {
			p.requeue(st.StartTime.Add(time.Duration(*rp.ActiveDeadlineSeconds)*time.Second).Sub(now), now)
		}
	}
	if finished(st) {
		// Cleaning up waits for the next reconcile, when the cache shows the job finished.
		p.createPods, p.createServices, p.deletePods = nil, nil, nil
	}
	return p
}

// permanentFailure says whether a failed pod fails the job under policy p.
func permanentFailure(p v1beta1.RestartPolicy, code int32) (bool, string) {
	switch p {
	case v1beta1.RestartPolicyExitCode:
		// 1-127 is the program's own verdict; 128+ is a signal (OOM kill, preemption): retry.
		if code >= 1 && code <= 127 {
			return true, fmt.Sprintf("exit code %d is permanent under restartPolicy ExitCode (1-127)", code)
		}
		return false, ""
	case v1beta1.RestartPolicyOnFailure, v1beta1.RestartPolicyAlways:
		return false, "" // the pod itself failed (eviction, node loss): recreate it
	default:
		return true, fmt.Sprintf("exit code %d under restartPolicy Never", code)
	}
}

// retryFailedPod counts a failed pod once, then deletes it (to be recreated) once its backoff
// has passed.
func retryFailedPod(pod *corev1.Pod, r replica, code int32, p *plan, now time.Time) {
	st := &p.status
	uid := string(pod.UID)
	if !slices.Contains(st.RestartingPods, uid) {
		st.RestartingPods = append(st.RestartingPods, uid)
		st.Restarts++
		p.events = append(p.events, event{warning: true, reason: "ReplicaRestarting",
			message: fmt.Sprintf("%s failed with exit code %d; recreating it (restart %d)", r, code, st.Restarts)})
	}
	wait := backoff(st.Restarts)
	if failedAt := failureTime(pod); failedAt.Add(wait).After(now) {
		p.requeue(failedAt.Add(wait).Sub(now), now)
		return
	}
	if pod.DeletionTimestamp == nil {
		p.deletePods = append(p.deletePods, pod)
	}
}

// pruneRestartingPods forgets counted pods that are gone: their replacements count afresh.
func pruneRestartingPods(st *v1beta1.MxJobStatus, pods []corev1.Pod) {
	st.RestartingPods = slices.DeleteFunc(st.RestartingPods, func(uid string) bool {
		return !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return string(p.UID) == uid })
	})
	if len(st.RestartingPods) == 0 {
		st.RestartingPods = nil
	}
}

func backoff(restarts int32) time.Duration {
	d := baseBackoff
	for i := int32(1); i < restarts && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// succeeded applies the success policy: local, the worker succeeded; dist, the scheduler
// succeeded, or with AllWorkers every worker did.
func succeeded(job *v1beta1.MxJob, counts map[v1beta1.ReplicaType]*v1beta1.ReplicaStatus) (bool, string) {
	workers := count(replicaSpec(job, v1beta1.ReplicaTypeWorker))
	done := func(t v1beta1.ReplicaType) int32 {
		if c := counts[t]; c != nil {
			return c.Succeeded
		}
		return 0
	}
	switch {
	case job.Spec.JobMode == v1beta1.LocalMode:
		return workers > 0 && done(v1beta1.ReplicaTypeWorker) == workers, "the worker succeeded"
	case job.Spec.SuccessPolicy == v1beta1.SuccessPolicyAllWorkers:
		return workers > 0 && done(v1beta1.ReplicaTypeWorker) == workers, fmt.Sprintf("all %d workers succeeded", workers)
	default:
		return done(v1beta1.ReplicaTypeScheduler) == 1, "the scheduler succeeded"
	}
}

// running sets the conditions of a job still in progress.
func running(st *v1beta1.MxJobStatus, pending bool, restarting []string, now time.Time) {
	switch {
	case len(restarting) > 0:
		st.Phase = v1beta1.PhaseRunning
		setCondition(st, v1beta1.ConditionRestarting, true, "ReplicaRestarting", fmt.Sprintf("recreating failed %v", restarting), now)
		setCondition(st, v1beta1.ConditionRunning, false, "ReplicaRestarting", fmt.Sprintf("recreating failed %v", restarting), now)
	case pending:
		st.Phase = v1beta1.PhaseCreating
	default:
		st.Phase = v1beta1.PhaseRunning
		setCondition(st, v1beta1.ConditionRunning, true, "AllReplicasRunning", "every replica's pod is running", now)
		if meta.FindStatusCondition(st.Conditions, v1beta1.ConditionRestarting) != nil {
			setCondition(st, v1beta1.ConditionRestarting, false, "AllReplicasRunning", "every replica's pod is running", now)
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
	if job.Spec.RunPolicy.TTLSecondsAfterFinished != nil {
		p.requeue(time.Duration(*job.Spec.RunPolicy.TTLSecondsAfterFinished)*time.Second, now)
	}
}

// cleanUp applies cleanPodPolicy and ttlSecondsAfterFinished to a finished job.
func cleanUp(job *v1beta1.MxJob, pods []corev1.Pod, services []corev1.Service, p *plan, now time.Time) {
	st := &p.status
	policy := job.Spec.RunPolicy.CleanPodPolicy
	for i := range pods {
		pod := &pods[i]
		active := pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
		if pod.DeletionTimestamp == nil && (policy == v1beta1.CleanPodPolicyAll || (policy != v1beta1.CleanPodPolicyNone && active)) {
			p.deletePods = append(p.deletePods, pod)
			p.deleteServices = append(p.deleteServices, pod.Name)
		}
	}
	if policy == v1beta1.CleanPodPolicyAll {
		// Services of replicas whose pods are already gone go too.
		for _, s := range services {
			if !slices.Contains(p.deleteServices, s.Name) {
				p.deleteServices = append(p.deleteServices, s.Name)
			}
		}
	}
	st.Phase = v1beta1.PhaseDone
	if st.State == v1beta1.StateFailed {
		st.Phase = v1beta1.PhaseFailed
	}
	if len(p.deletePods) > 0 {
		st.Phase = v1beta1.PhaseCleanUp
	}
	for _, c := range st.ReplicaStatuses {
		c.Active = 0 // what is left running is being deleted, or kept by cleanPodPolicy None
	}
	if policy == v1beta1.CleanPodPolicyNone {
		for _, pod := range pods {
			if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
				if c := st.ReplicaStatuses[v1beta1.ReplicaType(strings.ToUpper(pod.Labels[LabelReplicaType]))]; c != nil {
					c.Active++
				}
			}
		}
	}
	if ttl := job.Spec.RunPolicy.TTLSecondsAfterFinished; ttl != nil && st.CompletionTime != nil {
		expiry := st.CompletionTime.Add(time.Duration(*ttl) * time.Second)
		if !now.Before(expiry) {
			p.deleteJob = true
		} else {
			p.requeue(expiry.Sub(now), now)
		}
	}
}

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
		setCondition(st, v1beta1.ConditionRunning, false, "Suspended", "the job is suspended", now)
	}
	setCondition(st, v1beta1.ConditionSuspended, true, "Suspended", "runPolicy.suspend is true; the job's pods are deleted", now)
}

func (p *plan) requeue(after time.Duration, _ time.Time) {
	if after <= 0 {
		after = time.Second
	}
	if p.requeueAfter == 0 || after < p.requeueAfter {
		p.requeueAfter = after
	}
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

func hasService(services []corev1.Service, name string) bool {
	return slices.ContainsFunc(services, func(s corev1.Service) bool { return s.Name == name })
}

// exitCode is the exit code that failed the pod: the mxnet container's, else the first non-zero
// one; -1 when no container terminated (the pod was evicted or its node lost).
func exitCode(pod *corev1.Pod) int32 {
	code := int32(-1)
	for _, cs := range pod.Status.ContainerStatuses {
		t := cs.State.Terminated
		if t == nil {
			continue
		}
		if cs.Name == v1beta1.DefaultContainerName {
			return t.ExitCode
		}
		if code == -1 && t.ExitCode != 0 {
			code = t.ExitCode
		}
	}
	return code
}

// failureTime is when the pod failed: its last container termination, else its start.
func failureTime(pod *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range pod.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(t) {
			t = term.FinishedAt.Time
		}
	}
	if t.IsZero() && pod.Status.StartTime != nil {
		t = pod.Status.StartTime.Time
	}
	return t
}
