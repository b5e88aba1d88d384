package local

import "encoding/json"

// cniConfig is a node's CNI network: ptp gives each pod a veth routed through the node's namespace
// (no bridge, so Service traffic between two pods on one node still passes the node's iptables and
// needs no br_netfilter); host-local hands out the node's pod subnet; portmap serves hostPorts.
func cniConfig(n NodePlan, ipamDir string) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"cniVersion": "0.4.0",
		"name":       "mlkube",
		"plugins": []map[string]any{
			{
				"type":   "ptp",
				"ipMasq": false,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": ipamDir,
					"ranges":  [][]map[string]string{{{"subnet": n.PodCIDR.String()}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
				},
			},
			{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}},
		},
	}, "", "  ")
}
