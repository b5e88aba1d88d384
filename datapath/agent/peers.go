package agent

import (
	"context"
	"fmt"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/wire"
)

// The agents find each other in the EndpointSlices of their Service, in their own namespace
// only, and read the quota annotation of Namespaces (metadata only):
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list;watch,namespace=mlkube-datapath
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=list;watch

// AgentService is the Service whose EndpointSlices name the ready agents.
const AgentService = "node-agent"

// EndpointSlicePeers are the agents the EndpointSlices of AgentService in
// wire.AgentNamespace call ready, read from a cache restricted to them.
type EndpointSlicePeers struct {
	Reader client.Reader
}

var _ Peers = EndpointSlicePeers{}

// Ready implements Peers: one peer per node with a ready endpoint, at the
// endpoint's first address and the slice's http port.
func (p EndpointSlicePeers) Ready(ctx context.Context) ([]Peer, error) {
	var slices discoveryv1.EndpointSliceList
	err := p.Reader.List(ctx, &slices, client.InNamespace(wire.AgentNamespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: AgentService}, client.UnsafeDisableDeepCopy)
	if err != nil {
		return nil, fmt.Errorf("EndpointSlices of %s/%s: %w", wire.AgentNamespace, AgentService, err)
	}
	return readyPeers(slices.Items), nil
}

// readyPeers picks the ready endpoints with a node out of slices.
func readyPeers(slices []discoveryv1.EndpointSlice) []Peer {
	seen := map[string]bool{}
	var peers []Peer
	for _, s := range slices {
		port := wire.AgentPort
		for _, sp := range s.Ports {
			if sp.Port != nil && (sp.Name == nil || *sp.Name == "http") {
				port = int(*sp.Port)
			}
		}
		for _, ep := range s.Endpoints {
			// A nil ready condition means ready (discovery/v1).
			ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
			if !ready || ep.NodeName == nil || len(ep.Addresses) == 0 || seen[*ep.NodeName] {
				continue
			}
			seen[*ep.NodeName] = true
			peers = append(peers, Peer{Node: *ep.NodeName, URL: "http://" + net.JoinHostPort(ep.Addresses[0], strconv.Itoa(port))})
		}
	}
	return peers
}

// NamespaceQuotas reads QuotaAnnotation from Namespaces' metadata in a
// cache: Options.NamespaceQuotaOf. A Namespace without it, or with a value
// that is not a whole number of bytes, takes the agent's --namespace-quota.
func NamespaceQuotas(ctx context.Context, r client.Reader) func(ns string) (int64, bool) {
	return func(ns string) (int64, bool) {
		var m metav1.PartialObjectMetadata
		m.SetGroupVersionKind(NamespaceGVK)
		if err := r.Get(ctx, client.ObjectKey{Name: ns}, &m); err != nil {
			return 0, false
		}
		q, err := strconv.ParseInt(m.Annotations[QuotaAnnotation], 10, 64)
		return q, err == nil && q >= 0
	}
}

// NamespaceGVK is the kind of the Namespaces whose metadata the agent reads.
var NamespaceGVK = corev1.SchemeGroupVersion.WithKind("Namespace")
