package mxjob

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	k8serrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/internal/record"
	"github.com/mlkube/mlkube/controller/internal/slowstart"
)

// +kubebuilder:rbac:groups=mxnet.mlkube.io,resources=mxjobs,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=mxnet.mlkube.io,resources=mxjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=mxnet.mlkube.io,resources=mxjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;delete

// Reconciler runs MxJobs.
type Reconciler struct {
	client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the controller: MxJobs, and the pods and Services they own.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, workers int) error {
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1beta1.MxJob{}).
		Owns(&corev1.Pod{}).
		Owns(&corev1.Service{}).
		Named("mxjob").
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(r)
}

// Reconcile computes the job's plan from what the cluster holds, creates what is missing, writes
// the status once, and only then deletes: a deletion that must be counted (a retried pod) is
// never done before its count is stored.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var job v1beta1.MxJob
	if err := r.Get(ctx, req.NamespacedName, &job); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if job.DeletionTimestamp != nil {
		return reconcile.Result{}, nil // garbage collection removes the pods and Services
	}
	log := log.FromContext(ctx)
	pods, services, err := r.owned(ctx, &job)
	if err != nil {
		return reconcile.Result{}, err
	}
	p := computePlan(&job, pods, services, r.Clock.Now())

	errs := r.create(ctx, &job, p)
	if !equality.Semantic.DeepEqual(job.Status, p.status) {
		old := job.DeepCopy()
		job.Status = p.status
		if err := r.Status().Update(ctx, &job); err != nil {
			// A conflict means the cache was stale: reconcile again from fresher state.
			return reconcile.Result{}, errors.Join(append(errs, fmt.Errorf("updating status: %w", err))...)
		}
		r.recordTransitions(old, &job)
	}
	for _, e := range p.events {
		r.event(&job, e.warning, e.reason, e.message)
	}
	errs = append(errs, r.delete(ctx, &job, p)...)
	if p.deleteJob {
		log.Info("deleting the job: ttlSecondsAfterFinished has passed")
		if err := r.Delete(ctx, &job, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	return reconcile.Result{RequeueAfter: p.requeueAfter}, errors.Join(errs...)
}

// owned lists the pods and Services this job controls.
func (r *Reconciler) owned(ctx context.Context, job *v1beta1.MxJob) ([]corev1.Pod, []corev1.Service, error) {
	sel := client.MatchingLabels{LabelJobName: job.Name}
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(job.Namespace), sel); err != nil {
		return nil, nil, err
	}
	var services corev1.ServiceList
	if err := r.List(ctx, &services, client.InNamespace(job.Namespace), sel); err != nil {
		return nil, nil, err
	}
	isOwned := func(o client.Object) bool {
		ref := metav1.GetControllerOfNoCopy(o)
		return ref != nil && ref.UID == job.UID
	}
	var ownedPods []corev1.Pod
	for _, p := range pods.Items {
		if isOwned(&p) {
			ownedPods = append(ownedPods, p)
		}
	}
	var ownedServices []corev1.Service
	for _, s := range services.Items {
		if isOwned(&s) {
			ownedServices = append(ownedServices, s)
		}
	}
	return ownedPods, ownedServices, nil
}

// create makes the missing pods, then the missing Services, in slow-start batches. Names are
// deterministic, so a create racing a stale cache fails with AlreadyExists instead of making a
// duplicate. Pods go first: they take seconds to start, while a Service is ready at once.
func (r *Reconciler) create(ctx context.Context, job *v1beta1.MxJob, p plan) []error {
	var errs []error
	_, err := slowstart.Do(p.createPods, func(rep replica) error {
		pod := buildReplicaPod(job, rep)
		err := r.Create(ctx, pod)
		switch {
		case err == nil:
			r.event(job, false, "SuccessfulCreatePod", fmt.Sprintf("created pod %s", pod.Name))
		case k8serrors.IsAlreadyExists(err):
			return nil
		default:
			r.event(job, true, "FailedCreatePod", fmt.Sprintf("creating pod %s: %v", pod.Name, err))
		}
		return err
	})
	errs = append(errs, err)
	_, err = slowstart.Do(p.createServices, func(rep replica) error {
		svc := buildReplicaService(job, rep)
		err := r.Create(ctx, svc)
		if err != nil && !k8serrors.IsAlreadyExists(err) {
			r.event(job, true, "FailedCreateService", fmt.Sprintf("creating Service %s: %v", svc.Name, err))
			return err
		}
		return nil
	})
	return append(errs, err)
}

func (r *Reconciler) delete(ctx context.Context, job *v1beta1.MxJob, p plan) []error {
	_, podErr := slowstart.Do(p.deletePods, func(pod *corev1.Pod) error {
		// A pod that has terminated has nothing left to stop: remove it at once, so its
		// replacement (same name) can be created on the next reconcile.
		opts := []client.DeleteOption{client.Preconditions{UID: &pod.UID}}
		if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
			opts = append(opts, client.GracePeriodSeconds(0))
		}
		err := r.Delete(ctx, pod, opts...)
		if client.IgnoreNotFound(err) != nil && !k8serrors.IsConflict(err) {
			r.event(job, true, "FailedDeletePod", fmt.Sprintf("deleting pod %s: %v", pod.Name, err))
			return err
		}
		return nil
	})
	_, svcErr := slowstart.Do(p.deleteServices, func(name string) error {
		svc := &corev1.Service{}
		svc.Name, svc.Namespace = name, job.Namespace
		return client.IgnoreNotFound(r.Delete(ctx, svc))
	})
	return []error{podErr, svcErr}
}

// recordTransitions emits one event per condition that changed.
func (r *Reconciler) recordTransitions(old, job *v1beta1.MxJob) {
	for _, c := range job.Status.Conditions {
		prev := meta.FindStatusCondition(old.Status.Conditions, c.Type)
		if prev != nil && prev.Status == c.Status {
			continue
		}
		if prev == nil && c.Status != "True" {
			continue
		}
		warning := c.Type == v1beta1.ConditionFailed || c.Type == v1beta1.ConditionRestarting
		r.event(job, warning && c.Status == "True", c.Reason, fmt.Sprintf("%s=%s: %s", c.Type, c.Status, c.Message))
	}
}

func (r *Reconciler) event(obj *v1beta1.MxJob, warning bool, reason, message string) {
	record.Event(r.Recorder, obj, warning, reason, message)
}
