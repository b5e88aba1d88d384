package kueue

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/controller/core/indexer"
	"sigs.k8s.io/kueue/pkg/podset"
	"sigs.k8s.io/kueue/pkg/workload"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// +kubebuilder:rbac:groups=mxnet.mlkube.io,resources=mxjobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=mxnet.mlkube.io,resources=mxjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads/finalizers,verbs=update
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=resourceflavors,verbs=get;list;watch
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloadpriorityclasses,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get;list;watch

// gvk is the MxJob kind, the owner Kueue's index finds Workloads by.
var gvk = v1beta1.GroupVersion.WithKind("MxJob")

// Reconciler keeps each queued MxJob and its Workload in step.
type Reconciler struct {
	client.Client
	Recorder events.EventRecorder
	Clock    clock.Clock
}

// Served reports whether Kueue's Workload API is served: without it the integration stays off.
func Served(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	list, err := dc.ServerResourcesForGroupVersion(kueuev1.GroupVersion.String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("asking whether Kueue is installed: %w", err)
	}
	return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "workloads" }), nil
}

// SetupWithManager registers the controller: MxJobs, the Workloads they own, and the deletion of
// their pods (a Workload's quota is released only once the job's last pod is gone).
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if err := indexer.SetupWorkloadOwnerIndex(ctx, mgr.GetFieldIndexer(), gvk); err != nil {
		return err
	}
	podDeleted := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1beta1.MxJob{}).
		Owns(&kueuev1.Workload{}).
		Owns(&corev1.Pod{}, builder.WithPredicates(podDeleted)).
		Named("mxjob-kueue").
		Complete(r)
}

// Reconcile takes the steps of Kueue's job framework, in its order.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var job v1beta1.MxJob
	err := r.Get(ctx, req.NamespacedName, &job)
	if apierrors.IsNotFound(err) || (err == nil && job.DeletionTimestamp != nil) {
		return reconcile.Result{}, r.releaseWorkloads(ctx, req)
	}
	if err != nil || job.Labels[labels.KueueQueueName] == "" {
		return reconcile.Result{}, err
	}
	wl, err := r.workload(ctx, &job)
	if err != nil {
		return reconcile.Result{}, err
	}
	switch {
	case wl != nil && workload.IsFinished(wl):
		return reconcile.Result{}, workload.RemoveFinalizer(ctx, r.Client, wl)
	case wl != nil && wl.DeletionTimestamp != nil:
		if err := r.stop(ctx, &job, wl, "Deleted", "the job's Workload was deleted"); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, workload.RemoveFinalizer(ctx, r.Client, wl)
	}
	if message, success, done := finished(&job); done {
		if wl == nil {
			return reconcile.Result{}, nil
		}
		reason := kueuev1.WorkloadFinishedReasonSucceeded
		if !success {
			reason = kueuev1.WorkloadFinishedReasonFailed
		}
		return reconcile.Result{}, client.IgnoreNotFound(workload.Finish(ctx, r.Client, wl, reason, message, r.Clock))
	}
	if wl == nil {
		return reconcile.Result{}, r.create(ctx, &job)
	}
	if ev := meta.FindStatusCondition(wl.Status.Conditions, kueuev1.WorkloadEvicted); ev != nil && ev.Status == metav1.ConditionTrue {
		return reconcile.Result{}, r.evicted(ctx, &job, wl, ev)
	}
	if job.Spec.RunPolicy.Suspended() {
		if workload.IsAdmitted(wl) {
			return reconcile.Result{}, r.start(ctx, &job, wl)
		}
		return reconcile.Result{}, r.waiting(ctx, &job, wl)
	}
	if !workload.IsAdmitted(wl) {
		return reconcile.Result{}, r.stop(ctx, &job, wl, "NotAdmitted", "the job ran without Kueue's admission")
	}
	return reconcile.Result{}, nil
}

// workload is the job's Workload that is not finished, else its newest one, else nil.
func (r *Reconciler) workload(ctx context.Context, job *v1beta1.MxJob) (*kueuev1.Workload, error) {
	owned, err := r.ownedWorkloads(ctx, client.ObjectKeyFromObject(job))
	if err != nil {
		return nil, err
	}
	var found *kueuev1.Workload
	for _, wl := range owned {
		if !metav1.IsControlledBy(wl, job) {
			continue // a predecessor's of the same name
		}
		if found == nil || (workload.IsFinished(found) && !workload.IsFinished(wl)) {
			found = wl
		}
	}
	return found, nil
}

// releaseWorkloads drops Kueue's finalizer from the Workloads of a job being deleted, so that
// garbage collection can remove them.
func (r *Reconciler) releaseWorkloads(ctx context.Context, req reconcile.Request) error {
	owned, err := r.ownedWorkloads(ctx, req.NamespacedName)
	if err != nil {
		return err
	}
	for _, wl := range owned {
		if err := workload.RemoveFinalizer(ctx, r.Client, wl); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// ownedWorkloads lists, by Kueue's owner index, the Workloads whose owner is an MxJob named
// job.Name: the job's own, and any left by a predecessor of the same name.
func (r *Reconciler) ownedWorkloads(ctx context.Context, job types.NamespacedName) ([]*kueuev1.Workload, error) {
	var list kueuev1.WorkloadList
	if err := r.List(ctx, &list, client.InNamespace(job.Namespace), indexer.OwnerReferenceIndexFieldMatcher(gvk, job.Name)); err != nil {
		return nil, err
	}
	owned := make([]*kueuev1.Workload, len(list.Items))
	for i := range list.Items {
		owned[i] = &list.Items[i]
	}
	return owned, nil
}

// create queues the job: it must be suspended first (the webhook creates queued jobs suspended;
// one unsuspended by hand is stopped here) and its pods gone, then its Workload is made.
func (r *Reconciler) create(ctx context.Context, job *v1beta1.MxJob) error {
	if !job.Spec.RunPolicy.Suspended() {
		return r.patchJob(ctx, job, func() bool { return stop(job, nil) })
	}
	if active, err := r.active(ctx, job); err != nil || active {
		return err
	}
	wl, err := newWorkload(job, r.Scheme())
	if err != nil {
		return err
	}
	if err := setPriority(ctx, r.Client, job, wl); err != nil {
		return fmt.Errorf("finding the job's priority: %w", err)
	}
	if err := r.Create(ctx, wl); err != nil {
		return client.IgnoreAlreadyExists(err)
	}
	r.Recorder.Eventf(job, wl, corev1.EventTypeNormal, "CreatedWorkload", "Queue", "created Workload %s in LocalQueue %s", wl.Name, wl.Spec.QueueName)
	return nil
}

// start runs an admitted job with what the admission assigns. An admission that can never fit
// the job finishes its Workload as failed, as Kueue's job framework does.
func (r *Reconciler) start(ctx context.Context, job *v1beta1.MxJob, wl *kueuev1.Workload) error {
	infos, err := admissionInfos(ctx, r.Client, wl)
	if err != nil {
		return err
	}
	var runErr error
	err = r.patchJob(ctx, job, func() bool { runErr = run(job, infos); return runErr == nil })
	if podset.IsPermanent(runErr) {
		return workload.Finish(ctx, r.Client, wl, "FailedToStart", runErr.Error(), r.Clock)
	}
	if runErr != nil || err != nil {
		return errors.Join(runErr, err)
	}
	msg := fmt.Sprintf("admitted by ClusterQueue %s", wl.Status.Admission.ClusterQueue)
	r.Recorder.Eventf(job, wl, corev1.EventTypeNormal, "Started", "Admit", msg)
	return r.setAdmitted(ctx, job, metav1.ConditionTrue, v1beta1.ReasonAdmitted, msg)
}

// evicted stops a job Kueue evicted (preempted, deactivated, ...) and, once its last pod is gone,
// gives the Workload's quota back so that Kueue queues it again.
func (r *Reconciler) evicted(ctx context.Context, job *v1beta1.MxJob, wl *kueuev1.Workload, ev *metav1.Condition) error {
	if err := r.stop(ctx, job, wl, ev.Reason, ev.Message); err != nil || !workload.HasQuotaReservation(wl) {
		return err
	}
	if active, err := r.active(ctx, job); err != nil || active {
		return err
	}
	return workload.PatchAdmissionStatus(ctx, r.Client, wl, r.Clock, func(wl *kueuev1.Workload) (bool, error) {
		requeue := ev.Reason == kueuev1.WorkloadEvictedByPreemption || ev.Reason == kueuev1.WorkloadEvictedDueToNodeFailures
		updated := workload.SetRequeuedCondition(wl, ev.Reason, ev.Message, requeue)
		return workload.UnsetQuotaReservationWithCondition(wl, "Pending", ev.Message, r.Clock.Now()) || updated, nil
	})
}

// stop suspends the job, gives its templates back their own scheduling directives, and says why
// in its Admitted condition.
func (r *Reconciler) stop(ctx context.Context, job *v1beta1.MxJob, wl *kueuev1.Workload, reason, message string) error {
	stopped := !job.Spec.RunPolicy.Suspended()
	if err := r.patchJob(ctx, job, func() bool { return stop(job, restoreInfos(wl)) }); err != nil {
		return err
	}
	if stopped {
		r.Recorder.Eventf(job, wl, corev1.EventTypeNormal, "Stopped", "Suspend", "%s: %s", reason, message)
	}
	return r.setAdmitted(ctx, job, metav1.ConditionFalse, reason, message)
}

// waiting says in the job's Admitted condition why Kueue has not admitted it yet.
func (r *Reconciler) waiting(ctx context.Context, job *v1beta1.MxJob, wl *kueuev1.Workload) error {
	if q := kueuev1.LocalQueueName(job.Labels[labels.KueueQueueName]); wl.Spec.QueueName != q {
		// The queue may change while the job waits; Kueue moves the Workload.
		wl.Spec.QueueName = q
		return r.Update(ctx, wl)
	}
	msg := fmt.Sprintf("waiting in LocalQueue %s", wl.Spec.QueueName)
	if c := meta.FindStatusCondition(wl.Status.Conditions, kueuev1.WorkloadQuotaReserved); c != nil && c.Status == metav1.ConditionFalse && c.Message != "" {
		msg += ": " + c.Message
	}
	return r.setAdmitted(ctx, job, metav1.ConditionFalse, v1beta1.ReasonPending, msg)
}

// patchJob applies change to the job's spec as a merge patch that fails on a stale job, as the
// job framework's patches do, so that a decision taken on an old spec is never written.
func (r *Reconciler) patchJob(ctx context.Context, job *v1beta1.MxJob, change func() bool) error {
	base := job.DeepCopy()
	if !change() {
		return nil
	}
	return r.Patch(ctx, job, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
}

// setAdmitted writes the job's Admitted condition when it changed.
func (r *Reconciler) setAdmitted(ctx context.Context, job *v1beta1.MxJob, status metav1.ConditionStatus, reason, message string) error {
	c := metav1.Condition{Type: v1beta1.ConditionAdmitted, Status: status, Reason: reason, Message: message, ObservedGeneration: job.Generation}
	if !meta.SetStatusCondition(&job.Status.Conditions, c) {
		return nil
	}
	return r.Status().Update(ctx, job)
}

// active reports whether any pod of the job has not terminated: its Workload keeps its quota
// until none is left, so that the next job never shares the nodes with a dying one.
func (r *Reconciler) active(ctx context.Context, job *v1beta1.MxJob) (bool, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{v1beta1.LabelJobName: job.Name}); err != nil {
		return false, err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if metav1.IsControlledBy(p, job) && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			return true, nil
		}
	}
	return false, nil
}

// finished is the job's outcome, once it has one.
func finished(job *v1beta1.MxJob) (message string, success, done bool) {
	for _, t := range []string{v1beta1.ConditionSucceeded, v1beta1.ConditionFailed} {
		if c := meta.FindStatusCondition(job.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			return c.Message, t == v1beta1.ConditionSucceeded, true
		}
	}
	return "", false, false
}
