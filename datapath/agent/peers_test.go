package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
)

func TestReadyPeers(t *testing.T) {
	ep := func(node, addr string, ready *bool) discoveryv1.Endpoint {
		e := discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: ready}}
		if node != "" {
			e.NodeName = ptr.To(node)
		}
		return e
	}
	slices := []discoveryv1.EndpointSlice{
		{
			Ports:     []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080)}},
			Endpoints: []discoveryv1.Endpoint{ep("a", "10.0.0.1", ptr.To(true)), ep("b", "10.0.0.2", ptr.To(false)), ep("", "10.0.0.3", nil)},
		},
		{Endpoints: []discoveryv1.Endpoint{ep("c", "fd00::4", nil), ep("a", "10.0.0.9", ptr.To(true))}},
	}
	want := []Peer{{Node: "a", URL: "http://10.0.0.1:8080"}, {Node: "c", URL: "http://[fd00::4]:8080"}}
	if diff := cmp.Diff(want, readyPeers(slices)); diff != "" {
		t.Errorf("ready peers (-want +got):\n%s", diff)
	}
}
