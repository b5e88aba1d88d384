package local

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOverlappingRoutes(t *testing.T) {
	p, _ := testCluster(t)
	routes := `default via 192.0.2.1 dev eth0
192.0.2.0/24 dev eth0 proto kernel scope link src 192.0.2.2
10.0.0.0/8 via 192.0.2.1 dev eth0
10.244.7.0/24 via 192.0.2.9 dev eth0
10.96.0.10 via 192.0.2.9 dev eth0
172.16.0.0/12 dev tun0
`
	want := []string{"10.0.0.0/8", "10.244.7.0/24", "10.96.0.10"}
	if diff := cmp.Diff(want, overlappingRoutes(routes, p)); diff != "" {
		t.Errorf("clashes (-want +got):\n%s", diff)
	}
	if got := overlappingRoutes("default via 192.0.2.1 dev eth0\n", p); len(got) != 0 {
		t.Errorf("a default route is no clash, got %v", got)
	}
}
