package local

import (
	"encoding/json"
	"net/netip"
)

// kubeProxyConfig is a KubeProxyConfiguration for the kube-proxy named name at ip: one per node,
// in the node's namespace, and one in the host's, so the API server reaches ClusterIPs (webhooks).
func kubeProxyConfig(p Plan, name string, ip netip.Addr, kubeconfig string) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"clientConnection":   map[string]string{"kubeconfig": kubeconfig},
		"hostnameOverride":   name,
		"bindAddress":        ip.String(),
		"healthzBindAddress": ip.String() + ":10256",
		"metricsBindAddress": ip.String() + ":10249",
		"mode":               "iptables",
		"clusterCIDR":        p.PodCIDR.String(),
		// NodePorts only on the cluster's own address, never on the host's uplink.
		"nodePortAddresses": []string{netip.PrefixFrom(ip, 32).String()},
		// Zero leaves the kernel's conntrack settings alone: a network namespace may not raise
		// nf_conntrack_max, and the host's are not ours to change.
		"conntrack": map[string]any{
			"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s",
		},
	}, "", "  ")
}
