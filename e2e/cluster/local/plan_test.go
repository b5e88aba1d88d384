package local

import (
	"net/netip"
	"testing"
)

func TestNewPlan(t *testing.T) {
	for name, n := range map[string]int{"one node": 1, "two nodes": 2, "largest": maxNodes} {
		t.Run(name, func(t *testing.T) {
			p, err := NewPlan(n)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Nodes) != n {
				t.Fatalf("%d nodes, want %d", len(p.Nodes), n)
			}
			checkPlan(t, p)
		})
	}
	for _, n := range []int{0, -1, maxNodes + 1} {
		if _, err := NewPlan(n); err == nil {
			t.Errorf("NewPlan(%d): want an error", n)
		}
	}
}

// checkPlan asserts what the cluster's routing relies on: distinct names and addresses, node IPs on
// the bridge subnet, pod subnets inside PodCIDR and disjoint, and device names the kernel accepts.
func checkPlan(t *testing.T, p Plan) {
	t.Helper()
	if !p.Subnet.Contains(p.HostIP) || !p.ServiceCIDR.Contains(p.APIServiceIP) || !p.ServiceCIDR.Contains(p.ClusterDNS) {
		t.Errorf("cluster addresses outside their prefixes: %+v", p)
	}
	for _, a := range []netip.Prefix{p.Subnet, p.ServiceCIDR, p.PodCIDR} {
		for _, b := range []netip.Prefix{p.Subnet, p.ServiceCIDR, p.PodCIDR} {
			if a != b && a.Overlaps(b) {
				t.Errorf("%s overlaps %s", a, b)
			}
		}
	}
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		for _, key := range []string{n.Name, n.IP.String(), n.PodCIDR.String(), n.HostVeth, n.NodeVeth} {
			if seen[key] {
				t.Errorf("%s used twice", key)
			}
			seen[key] = true
		}
		if !p.Subnet.Contains(n.IP) || n.IP == p.HostIP {
			t.Errorf("%s: IP %s not a free address of %s", n.Name, n.IP, p.Subnet)
		}
		if !p.PodCIDR.Contains(n.PodCIDR.Addr()) || n.PodCIDR.Bits() < p.PodCIDR.Bits() {
			t.Errorf("%s: pod subnet %s outside %s", n.Name, n.PodCIDR, p.PodCIDR)
		}
		for _, dev := range []string{n.HostVeth, n.NodeVeth, p.Bridge} {
			if len(dev) > 15 {
				t.Errorf("device name %q longer than IFNAMSIZ-1", dev)
			}
		}
	}
}

func TestPlanAddresses(t *testing.T) {
	p, err := NewPlan(2)
	if err != nil {
		t.Fatal(err)
	}
	for got, want := range map[string]string{
		p.APIServer():               "https://10.250.0.1:6443",
		p.nodeAddr(p.Nodes[1].IP):   "10.250.0.12/24",
		p.Nodes[1].PodCIDR.String(): "10.244.2.0/24",
		p.Nodes[0].Name:             "mlkube-node-1",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
