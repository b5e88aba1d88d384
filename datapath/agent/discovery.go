package agent

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// The agent reads Transforms and nothing else; the controller pulls the
// agent's statistics, so the agent needs no write access.
// +kubebuilder:rbac:groups=etl.mlkube.io,resources=transforms,verbs=get;list;watch

// CacheResolver resolves Transforms from a cache that watches them cluster
// wide (a controller-runtime cache.Cache), so a lookup costs no API call.
type CacheResolver struct {
	Reader client.Reader
	// Node is this agent's node: the one whose transformer it uses.
	Node string
}

var _ Resolver = CacheResolver{}

// Lookup implements Resolver.
func (r CacheResolver) Lookup(ctx context.Context, namespace, name string) (Target, error) {
	var t etlv1alpha1.Transform
	err := r.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &t)
	if apierrors.IsNotFound(err) {
		return Target{}, ErrUnknownTransform
	}
	if err != nil {
		return Target{}, fmt.Errorf("transform %s/%s: %w", namespace, name, err)
	}
	return TargetOf(&t, r.Node)
}

// TrimTransform is the agent's cache transform for Transforms: it keeps only what TargetOf reads,
// and of the per-node status only node's entry. Every agent watches every Transform of the
// cluster, so what it caches is multiplied by the number of nodes; a Transform's code, pod
// template, environment, 128 recorded errors and the other nodes' entries would be held by each
// agent for nothing.
func TrimTransform(node string) func(any) (any, error) {
	return func(obj any) (any, error) {
		t, ok := obj.(*etlv1alpha1.Transform)
		if !ok {
			return obj, nil
		}
		trimmed := &etlv1alpha1.Transform{TypeMeta: t.TypeMeta}
		trimmed.Name, trimmed.Namespace, trimmed.UID = t.Name, t.Namespace, t.UID
		trimmed.ResourceVersion, trimmed.Generation = t.ResourceVersion, t.Generation
		trimmed.DeletionTimestamp = t.DeletionTimestamp
		s := t.Spec
		trimmed.Spec = etlv1alpha1.TransformSpec{
			Stopped: s.Stopped, Communication: s.Communication, Argument: s.Argument, ObjectTimeout: s.ObjectTimeout,
		}
		trimmed.Status.Stage, trimmed.Status.Reason = t.Status.Stage, t.Status.Reason
		if ns, ok := nodeStatus(t.Status.Nodes, node); ok {
			ns.Counters = etlv1alpha1.Counters{}
			trimmed.Status.Nodes = []etlv1alpha1.NodeStatus{ns}
		}
		return trimmed, nil
	}
}
