package mxjob

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/internal/agentpods"
	"github.com/mlkube/mlkube/controller/internal/owned"
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
	// Agents finds the nodes whose data path agent is ready, where the workers of a job with
	// spec.dataset go.
	Agents *agentpods.Lister
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
	o := owned.Owner{Client: r.Client, Recorder: r.Recorder, Object: &job}
	pods, err := o.Pods(ctx, client.MatchingLabels{v1beta1.LabelJobName: job.Name})
	if err != nil {
		return reconcile.Result{}, err
	}
	services, err := o.Services(ctx, client.MatchingLabels{v1beta1.LabelJobName: job.Name})
	if err != nil {
		return reconcile.Result{}, err
	}
	p := computePlan(&job, pods, services, r.Clock.Now())
	place, err := r.placeWorkers(ctx, o, &job, p.createPods)
	if err != nil {
		return reconcile.Result{}, err
	}

	// Pods go first: they take seconds to start, while a Service is ready at once.
	errs := []error{
		owned.Create(ctx, o, place.create, podCreation(&job, place.nodes)),
		owned.Create(ctx, o, p.createServices, serviceCreation(&job)),
	}
	if !equality.Semantic.DeepEqual(job.Status, p.status) {
		old := job.DeepCopy()
		job.Status = p.status
		if err := r.Status().Update(ctx, &job); err != nil {
			// A conflict means the cache was stale: reconcile again from fresher state.
			return reconcile.Result{}, errors.Join(append(errs, fmt.Errorf("updating status: %w", err))...)
		}
		recordTransitions(o, old, &job)
	}
	o.Record(p.events)
	errs = append(errs,
		owned.Delete(ctx, o, p.deletePods, podDeletion),
		owned.Delete(ctx, o, p.deleteServices, serviceDeletion(job.Namespace)))
	if p.deleteJob {
		ctrl.LoggerFrom(ctx).Info("deleting the job: ttlSecondsAfterFinished has passed")
		if err := r.Delete(ctx, &job, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
			errs = append(errs, err)
		}
	}
	requeue := p.requeueAfter
	if place.requeueAfter > 0 {
		requeue = owned.Sooner(requeue, place.requeueAfter)
	}
	return reconcile.Result{RequeueAfter: requeue}, errors.Join(errs...)
}

// podCreation makes a replica's pod; a worker of a job with a dataset goes to one of nodes.
func podCreation(job *v1beta1.MxJob, nodes []string) func(replica) owned.Creation {
	cluster := mxCluster(job).Encode()
	return func(r replica) owned.Creation {
		pod := buildReplicaPod(job, cluster, r)
		if readsDataset(job, r) {
			addDataset(pod, job, nodes)
		}
		return owned.Creation{Object: pod, Created: "created pod " + pod.Name, Creating: "creating pod " + pod.Name}
	}
}

// serviceCreation makes a replica's Service.
func serviceCreation(job *v1beta1.MxJob) func(replica) owned.Creation {
	return func(r replica) owned.Creation {
		svc := buildReplicaService(job, r)
		return owned.Creation{Object: svc, Creating: "creating Service " + svc.Name}
	}
}

// podDeletion deletes a pod only if it is still the pod the plan saw. A pod that has terminated
// has nothing left to stop: it goes at once, so that its replacement (same name) can be created
// on the next reconcile.
func podDeletion(pod *corev1.Pod) owned.Deletion {
	opts := []client.DeleteOption{client.Preconditions{UID: &pod.UID}}
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		opts = append(opts, client.GracePeriodSeconds(0))
	}
	return owned.Deletion{Object: pod, Options: opts, Deleting: "deleting pod " + pod.Name}
}

// serviceDeletion deletes a Service by name.
func serviceDeletion(namespace string) func(string) owned.Deletion {
	return func(name string) owned.Deletion {
		svc := &corev1.Service{}
		svc.Name, svc.Namespace = name, namespace
		return owned.Deletion{Object: svc}
	}
}

// recordTransitions emits one event per condition that changed.
func recordTransitions(o owned.Owner, old, job *v1beta1.MxJob) {
	for _, c := range job.Status.Conditions {
		prev := meta.FindStatusCondition(old.Status.Conditions, c.Type)
		if prev != nil && prev.Status == c.Status {
			continue
		}
		if prev == nil && c.Status != "True" {
			continue
		}
		warning := c.Type == v1beta1.ConditionFailed || c.Type == v1beta1.ConditionRestarting
		o.Event(warning && c.Status == "True", c.Reason, fmt.Sprintf("%s=%s: %s", c.Type, c.Status, c.Message))
	}
}
