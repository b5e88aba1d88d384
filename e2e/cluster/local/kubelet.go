package local

import (
	"encoding/json"
	"path/filepath"
)

// kubeletConfig is one node's KubeletConfiguration (JSON, which kubelet reads as YAML).
func kubeletConfig(p Plan, n NodePlan, f nodeFiles) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"apiVersion":         "kubelet.config.k8s.io/v1beta1",
		"kind":               "KubeletConfiguration",
		"address":            n.IP.String(),
		"readOnlyPort":       0,
		"healthzBindAddress": "127.0.0.1", // the node's own loopback: each node has its namespace
		"authentication": map[string]any{
			"anonymous": map[string]bool{"enabled": true},
			"webhook":   map[string]bool{"enabled": false},
		},
		// Enough for a throwaway cluster: the API server reaches kubelets for logs, exec and
		// port-forward without client certificates.
		"authorization":            map[string]string{"mode": "AlwaysAllow"},
		"containerRuntimeEndpoint": "unix://" + f.ContainerdSock,
		// The host has cgroups v1, no systemd cgroup driver and no swap policy to enforce.
		"cgroupDriver": "cgroupfs",
		"failCgroupV1": false,
		"failSwapOn":   false,
		// Each node's pods live under their own cgroup, as on separate machines.
		"cgroupRoot":    "/" + n.Name,
		"clusterDNS":    []string{p.ClusterDNS.String()},
		"clusterDomain": "cluster.local",
		// No host resolver for pods: a name the cluster cannot answer must not be asked of a
		// server off this machine.
		"resolvConf": "",
		// Otherwise the kubelets share /var/log/pods and delete each other's logs.
		"podLogsDir": f.PodLogs,
		// The disk is shared with the build: evict and collect images only when it is really full,
		// because imported images cannot be pulled back.
		"evictionHard": map[string]string{
			"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%",
		},
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"serializeImagePulls":         false,
	}, "", "  ")
}

func kubeletArgs(n NodePlan, f nodeFiles) []string {
	return []string{
		"--config=" + filepath.Join(f.Dir, "kubelet.json"),
		"--kubeconfig=" + filepath.Join(f.Dir, "kubelet.kubeconfig"),
		"--root-dir=" + f.KubeletRoot,
		// Its serving certificate; the default, /var/lib/kubelet/pki, would be shared by the nodes.
		"--cert-dir=" + filepath.Join(f.KubeletRoot, "pki"),
		"--hostname-override=" + n.Name,
		"--node-ip=" + n.IP.String(),
		"--v=2",
	}
}
