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
