package transform

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/internal/owned"
	"github.com/mlkube/mlkube/controller/transform/podspec"
)

// +kubebuilder:rbac:groups=etl.mlkube.io,resources=transforms,verbs=get;list;watch
// +kubebuilder:rbac:groups=etl.mlkube.io,resources=transforms/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=etl.mlkube.io,resources=transforms/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=etl.mlkube.io,resources=objectstores,verbs=get;list;watch

// Reconciler runs Transforms.
type Reconciler struct {
	client.Client
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Stats supplies the node agents' latest statistics. The agents it pulls them from (its
	// Namespace and Selector) are also the only pods a transformer pod admits traffic from.
	Stats *Collector
	// Images are the io shim's and the code runtimes' images; unset means wire.DefaultPodImages.
	Images wire.PodImages
	// Keys give the current cluster key, which new transformer pods get their credential from.
	Keys KeySource

	// stores writes the store origins next to the tokens of Transforms that take store URLs.
	stores storesWriter
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// SetupWithManager registers the controller: Transforms, their pods and NetworkPolicies, nodes
// (a node joining or leaving changes every Transform's set of eligible nodes), ObjectStores (the
// origins listed next to the tokens of the namespace's Transforms that take store URLs) and the
// agents' statistics.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Stats == nil {
		return errors.New("the Transform controller needs Stats: it locates the node agents, the only peers of transformer pods")
	}
	if r.Keys == nil {
		return errors.New("the Transform controller needs Keys: transformers answer only requests with the credential derived from them")
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.Images.IOShim == "" && r.Images.CodeRuntimes == nil {
		r.Images = wire.DefaultPodImages()
	}
	if err := mgr.Add(r.Stats); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Transform{}).
		Owns(&corev1.Pod{}).
		Owns(&networkingv1.NetworkPolicy{}).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allTransforms)).
		// A change of labels or annotations changes no origin.
		Watches(&v1alpha1.ObjectStore{}, handler.EnqueueRequestsFromMapFunc(r.pullingTransforms),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(source.Channel(r.Stats.Changes(), &handler.EnqueueRequestForObject{})).
		Named("transform").
		Complete(r)
}

func (r *Reconciler) allTransforms(ctx context.Context, _ client.Object) []reconcile.Request {
	var list v1alpha1.TransformList
	if err := r.List(ctx, &list); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for _, t := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&t)})
	}
	return reqs
}

// Reconcile keeps the Transform's NetworkPolicy, creates the missing transformer pods, writes the
// status once, then deletes.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var t v1alpha1.Transform
	if err := r.Get(ctx, req.NamespacedName, &t); err != nil {
		if apierrors.IsNotFound(err) {
			r.stores.forget(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if t.DeletionTimestamp != nil {
		r.stores.forget(req.NamespacedName)
		return reconcile.Result{}, nil // garbage collection removes the pods and the NetworkPolicy
	}
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes); err != nil {
		return reconcile.Result{}, err
	}
	o := owned.Owner{Client: r.Client, Recorder: r.Recorder, Object: &t}
	pods, err := o.Pods(ctx, client.MatchingLabels{v1alpha1.LabelName: t.Name})
	if err != nil {
		return reconcile.Result{}, err
	}
	p := computePlan(&t, nodes.Items, pods, r.Stats.Latest(), r.Clock.Now())

	// The policy goes first and, until it exists, no pod is created: a transformer never starts
	// open to the whole cluster.
	policy := buildNetworkPolicy(&t, r.Stats.Namespace, r.Stats.Selector)
	err = owned.Ensure(ctx, o, policy, restoreNetworkPolicy)
	errs := []error{err}
	// The store origins go next to the tokens of the running pods and, with the token, before
	// any pod is created: a transformer never starts refusing the stores it is sent.
	origins, listErr := r.listStoreOrigins(ctx, &t)
	errs = append(errs, listErr)
	if listErr == nil {
		errs = append(errs, r.applyStores(ctx, &t, pods, origins))
	}
	if err == nil && listErr == nil && len(p.createOn) > 0 {
		errs = append(errs, r.createPods(ctx, o, &t, p.createOn, origins))
	}
	if !equality.Semantic.DeepEqual(t.Status, p.status) {
		oldStage := t.Status.Stage
		t.Status = p.status
		if err := r.Status().Update(ctx, &t); err != nil {
			return reconcile.Result{}, errors.Join(append(errs, fmt.Errorf("updating status: %w", err))...)
		}
		if oldStage != t.Status.Stage {
			o.Event(t.Status.Stage == v1alpha1.StageAborted, string(t.Status.Stage), t.Status.Reason)
		}
	}
	o.Record(p.events)
	errs = append(errs, owned.Delete(ctx, o, p.deletePods, podDeletion))
	return reconcile.Result{RequeueAfter: p.requeueAfter}, errors.Join(errs...)
}

// createPods creates the transformer pods of nodes, after the token Secret they mount: a pod
// never starts without its credential, and the Secret is written again before every creation, so
// a Secret deleted or altered since is restored, with the store origins of a Transform that takes
// store URLs (written whatever the writer last wrote, which a deleted Secret lost).
func (r *Reconciler) createPods(ctx context.Context, o owned.Owner, t *v1alpha1.Transform, nodes []string, origins []string) error {
	keyID, key, err := r.Keys.Current(ctx)
	if err != nil {
		return fmt.Errorf("transformer credential: %w", err)
	}
	if err := applyTokenSecret(ctx, r.Client, t, keyID, key); err != nil {
		return err
	}
	if takesStoreURLs(t) {
		if err := r.stores.apply(ctx, r.Client, t, keyID, origins, true); err != nil {
			return err
		}
	}
	return owned.Create(ctx, o, nodes, podCreation(t, r.Images, keyID))
}

// podCreation makes the transformer pod of a node, with the credential of key keyID.
func podCreation(t *v1alpha1.Transform, images wire.PodImages, keyID string) func(node string) owned.Creation {
	return func(node string) owned.Creation {
		pod := podspec.Build(t, node, images)
		mountToken(pod, t, keyID)
		return owned.Creation{Object: pod,
			Created:  fmt.Sprintf("created transformer pod %s on node %s", pod.Name, node),
			Creating: "creating transformer pod on node " + node}
	}
}

// podDeletion deletes a pod only if it is still the pod the plan saw: a pod of the same name
// created since is left alone.
func podDeletion(pod *corev1.Pod) owned.Deletion {
	return owned.Deletion{Object: pod, Options: []client.DeleteOption{client.Preconditions{UID: &pod.UID}}}
}
