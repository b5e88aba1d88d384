package local

import (
	"fmt"
	"net/netip"
)

// Plan is the local cluster's address plan. Every address in it lives on this machine: on the host
// bridge, in a node's network namespace, or in a pod namespace under a node. None is routed
// anywhere else, so traffic to them cannot leave the machine.
type Plan struct {
	// Bridge is the host bridge that holds HostIP and links the nodes' veths.
	Bridge string
	// Subnet is Bridge's subnet; HostIP is the API server's address on it.
	Subnet netip.Prefix
	HostIP netip.Addr
	// ServiceCIDR holds ClusterIPs; APIServiceIP is the `kubernetes` Service, ClusterDNS `kube-dns`.
	ServiceCIDR  netip.Prefix
	APIServiceIP netip.Addr
	ClusterDNS   netip.Addr
	// PodCIDR covers every node's pod subnet.
	PodCIDR netip.Prefix
	Nodes   []NodePlan
}

// NodePlan is one node: a network namespace named Name, reached from the host at IP.
type NodePlan struct {
	Name     string
	IP       netip.Addr
	PodCIDR  netip.Prefix
	HostVeth string // the host end of the node's veth, a port of Plan.Bridge
	NodeVeth string // the node's end, inside its namespace
}

// maxNodes keeps node IPs (.11 and up) and pod subnets (10.244.<n>.0/24) inside their prefixes.
const maxNodes = 200

// NewPlan lays out a cluster of n nodes.
func NewPlan(n int) (Plan, error) {
	if n < 1 || n > maxNodes {
		return Plan{}, fmt.Errorf("nodes = %d, want 1..%d", n, maxNodes)
	}
	p := Plan{
		Bridge:       "mlkube0",
		Subnet:       netip.MustParsePrefix("10.250.0.0/24"),
		HostIP:       netip.MustParseAddr("10.250.0.1"),
		ServiceCIDR:  netip.MustParsePrefix("10.96.0.0/16"),
		APIServiceIP: netip.MustParseAddr("10.96.0.1"),
		ClusterDNS:   netip.MustParseAddr("10.96.0.10"),
		PodCIDR:      netip.MustParsePrefix("10.244.0.0/16"),
	}
	for i := 1; i <= n; i++ {
		p.Nodes = append(p.Nodes, NodePlan{
			Name:     fmt.Sprintf("mlkube-node-%d", i),
			IP:       netip.AddrFrom4([4]byte{10, 250, 0, byte(10 + i)}),
			PodCIDR:  netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(i), 0}), 24),
			HostVeth: fmt.Sprintf("mlkube-h%d", i),
			NodeVeth: fmt.Sprintf("mlkube-n%d", i),
		})
	}
	return p, nil
}

// APIServer is the URL every component and the kubeconfig use.
func (p Plan) APIServer() string { return fmt.Sprintf("https://%s:6443", p.HostIP) }

// RegistryPort is where hack/cluster/registry.sh serves images on this machine.
const RegistryPort = 5000

// Registry is host:port of the harness's image registry as the nodes reach it: this machine's
// address on the bridge.
func (p Plan) Registry() string { return fmt.Sprintf("%s:%d", p.HostIP, RegistryPort) }

// hostProxyNode is the node the host's kube-proxy stands in for. kube-proxy needs a Node object
// to start (it waits 30s for a missing one before programming any rule), and a node of its own
// decides what "local" means for it: a Service with internalTrafficPolicy Local reached from the
// host answers from this node's pods.
func (p Plan) hostProxyNode() string { return p.Nodes[0].Name }

// nodeAddr is ip with the bridge subnet's prefix length, as assigned to a device.
func (p Plan) nodeAddr(ip netip.Addr) string {
	return netip.PrefixFrom(ip, p.Subnet.Bits()).String()
}
