package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/transformertoken"
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
	// Keys derive the transformers' credentials (--transformer-key-dir); nil reaches only
	// transformers created without one.
	Keys *transformertoken.Keys
	// Settle is how long a lookup that finds the Transform not running waits for the cache to
	// see it running (0: not at all). The cache follows the API server a little behind, so a
	// user who saw the stage Running (kubectl wait) and sends an object at once could otherwise
	// be told it is still starting. It costs no API call, only a not-running answer's latency.
	Settle time.Duration
}

var _ Resolver = CacheResolver{}

// settlePoll is how often a settling lookup reads the cache again.
const settlePoll = 50 * time.Millisecond

// Lookup implements Resolver.
func (r CacheResolver) Lookup(ctx context.Context, namespace, name string) (Target, error) {
	target, err := r.lookup(ctx, namespace, name)
	if _, ok := errors.AsType[*NotRunningError](err); !ok || r.Settle <= 0 {
		return target, err
	}
	deadline := time.NewTimer(r.Settle)
	defer deadline.Stop()
	tick := time.NewTicker(settlePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return target, err
		case <-deadline.C:
			return target, err
		case <-tick.C:
		}
		target, err = r.lookup(ctx, namespace, name)
		if _, ok := errors.AsType[*NotRunningError](err); !ok {
			return target, err
		}
	}
}

// lookup is one read of the Transform from the cache.
func (r CacheResolver) lookup(ctx context.Context, namespace, name string) (Target, error) {
	var t etlv1alpha1.Transform
	err := r.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &t)
	if apierrors.IsNotFound(err) {
		return Target{}, ErrUnknownTransform
	}
	if err != nil {
		return Target{}, fmt.Errorf("transform %s/%s: %w", namespace, name, err)
	}
	target, err := TargetOf(&t, r.Node)
	if err != nil {
		return Target{}, err
	}
	return withToken(target, r.Keys)
}

// withToken derives the Transform's credential for its transformer. It is derived for the
// Transform the request names, never taken from the transformer's address: a status pointed at
// another Transform's transformer carries this Transform's token there, which that transformer
// refuses. A key the agent lacks leaves the Transform not running on this node, saying which
// key and where it comes from.
func withToken(t Target, keys *transformertoken.Keys) (Target, error) {
	if t.TokenKey == "" {
		return t, nil
	}
	if keys == nil {
		return Target{}, &NotRunningError{Reason: fmt.Sprintf("transformer expects a token of key %s, and this agent has no --transformer-key-dir (Secret %s/%s)",
			t.TokenKey, wire.AgentNamespace, transformertoken.SecretName)}
	}
	token, err := keys.Token(t.TokenKey, t.Namespace, t.Name, t.UID)
	if errors.Is(err, transformertoken.ErrUnknownKey) {
		return Target{}, &NotRunningError{Reason: fmt.Sprintf("transformer token key %s is not in Secret %s/%s as this agent sees it; it was removed while the transformer uses it, or has not reached the agent yet",
			t.TokenKey, wire.AgentNamespace, transformertoken.SecretName)}
	}
	if err != nil {
		return Target{}, &NotRunningError{Reason: err.Error()}
	}
	t.Token = token
	return t, nil
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
