package local

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

func testCluster(t *testing.T) (Plan, layout) {
	t.Helper()
	p, err := NewPlan(2)
	if err != nil {
		t.Fatal(err)
	}
	return p, layout{State: "/repo/_output/cluster", Run: "/run/mlkube"}
}

// TestContainerdConfig: the settings without which pods do not start on this machine, and the
// per-node paths that keep two containerds apart.
func TestContainerdConfig(t *testing.T) {
	_, l := testCluster(t)
	f := l.node("mlkube-node-1")
	b, err := containerdConfig(f, "mlkube/pause:dev", "10.250.0.1:5000")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Version int
		Root    string
		State   string
		GRPC    struct{ Address string } `toml:"grpc"`
		Plugins map[string]map[string]any
	}
	if _, err := toml.Decode(string(b), &cfg); err != nil {
		t.Fatalf("not TOML: %v\n%s", err, b)
	}
	cri := cfg.Plugins["io.containerd.grpc.v1.cri"]
	runc := cri["containerd"].(map[string]any)["runtimes"].(map[string]any)["runc"].(map[string]any)["options"].(map[string]any)
	cni := cri["cni"].(map[string]any)
	mirror := cri["registry"].(map[string]any)["mirrors"].(map[string]any)["10.250.0.1:5000"].(map[string]any)
	got := map[string]any{
		"version": cfg.Version, "root": cfg.Root, "state": cfg.State, "grpc": cfg.GRPC.Address,
		"sandbox_image": cri["sandbox_image"], "restrict_oom_score_adj": cri["restrict_oom_score_adj"],
		"runc root": runc["Root"], "systemd cgroup": runc["SystemdCgroup"],
		"cni bin": cni["bin_dir"], "cni conf": cni["conf_dir"],
		"registry endpoint": mirror["endpoint"],
	}
	want := map[string]any{
		"version": 2, "root": f.ContainerdRoot, "state": f.ContainerdState, "grpc": f.ContainerdSock,
		"sandbox_image": "mlkube/pause:dev", "restrict_oom_score_adj": true,
		"runc root": f.RuncRoot, "systemd cgroup": false,
		"cni bin": "/usr/lib/cni", "cni conf": f.CNIConfDir,
		"registry endpoint": []any{"http://10.250.0.1:5000"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("containerd config (-want +got):\n%s", diff)
	}
}

// TestNodeFilesAreDistinct: no two nodes share a path, and sockets fit a unix socket address.
func TestNodeFilesAreDistinct(t *testing.T) {
	p, l := testCluster(t)
	seen := map[string]string{}
	for _, n := range p.Nodes {
		f := l.node(n.Name)
		for _, path := range []string{f.Dir, f.ContainerdRoot, f.ContainerdState, f.ContainerdSock, f.RuncRoot, f.CNIConfDir, f.IPAMDir, f.KubeletRoot, f.PodLogs} {
			if other, ok := seen[path]; ok {
				t.Errorf("%s used by %s and %s", path, other, n.Name)
			}
			seen[path] = n.Name
		}
		if len(f.ContainerdSock) >= 108 {
			t.Errorf("socket path %q too long for sun_path", f.ContainerdSock)
		}
	}
}

func TestCNIConfig(t *testing.T) {
	p, _ := testCluster(t)
	b, err := cniConfig(p.Nodes[1], "/ipam")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		CNIVersion string `json:"cniVersion"`
		Plugins    []struct {
			Type   string
			IPMasq bool `json:"ipMasq"`
			IPAM   struct {
				Type    string
				DataDir string `json:"dataDir"`
				Ranges  [][]map[string]string
			}
		}
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Plugins) != 2 || cfg.Plugins[0].Type != "ptp" || cfg.Plugins[1].Type != "portmap" {
		t.Fatalf("plugins = %+v, want ptp then portmap", cfg.Plugins)
	}
	ptp := cfg.Plugins[0]
	// No masquerading: pods are routed, and their source addresses must survive across nodes.
	if ptp.IPMasq || ptp.IPAM.Type != "host-local" || ptp.IPAM.DataDir != "/ipam" || ptp.IPAM.Ranges[0][0]["subnet"] != "10.244.2.0/24" {
		t.Errorf("ptp = %+v", ptp)
	}
}

func TestKubeletConfig(t *testing.T) {
	p, l := testCluster(t)
	n := p.Nodes[0]
	f := l.node(n.Name)
	b, err := kubeletConfig(p, n, f)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"kind":                     "KubeletConfiguration",
		"address":                  "10.250.0.11",
		"cgroupDriver":             "cgroupfs",
		"cgroupRoot":               "/mlkube-node-1",
		"failCgroupV1":             false,
		"failSwapOn":               false,
		"containerRuntimeEndpoint": "unix:///run/mlkube/mlkube-node-1/containerd.sock",
		"podLogsDir":               f.PodLogs,
		"resolvConf":               "",
	} {
		if diff := cmp.Diff(want, cfg[key]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
	}
	if diff := cmp.Diff([]any{"10.96.0.10"}, cfg["clusterDNS"]); diff != "" {
		t.Errorf("clusterDNS (-want +got):\n%s", diff)
	}
	args := strings.Join(kubeletArgs(n, f), " ")
	for _, want := range []string{"--hostname-override=mlkube-node-1", "--node-ip=10.250.0.11", "--root-dir=" + f.KubeletRoot, "--cert-dir=" + filepath.Join(f.KubeletRoot, "pki")} {
		if !strings.Contains(args, want) {
			t.Errorf("kubelet args %q lack %q", args, want)
		}
	}
}

func TestKubeProxyConfig(t *testing.T) {
	p, _ := testCluster(t)
	b, err := kubeProxyConfig(p, "mlkube-node-2", p.Nodes[1].IP, "/kc")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"hostnameOverride": cfg["hostnameOverride"], "mode": cfg["mode"], "clusterCIDR": cfg["clusterCIDR"],
		"nodePortAddresses": cfg["nodePortAddresses"], "kubeconfig": cfg["clientConnection"].(map[string]any)["kubeconfig"],
		"maxPerCore": cfg["conntrack"].(map[string]any)["maxPerCore"],
	}
	want := map[string]any{
		"hostnameOverride": "mlkube-node-2", "mode": "iptables", "clusterCIDR": "10.244.0.0/16",
		"nodePortAddresses": []any{"10.250.0.12/32"}, "kubeconfig": "/kc", "maxPerCore": float64(0),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kube-proxy config (-want +got):\n%s", diff)
	}
}

// TestControlPlaneArgs: the flags the cluster's wiring depends on.
func TestControlPlaneArgs(t *testing.T) {
	p, l := testCluster(t)
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"etcd on loopback": {etcdArgs(l), []string{"--listen-client-urls=http://127.0.0.1:23790", "--data-dir=/repo/_output/cluster/etcd"}},
		"apiserver": {apiserverArgs(p, l), []string{
			"--etcd-servers=http://127.0.0.1:23790", "--advertise-address=10.250.0.1", "--bind-address=10.250.0.1",
			"--service-cluster-ip-range=10.96.0.0/16", "--kubelet-preferred-address-types=InternalIP,Hostname",
			"--token-auth-file=/repo/_output/cluster/pki/tokens.csv",
		}},
		"apiserver proxies to aggregated API servers": {apiserverArgs(p, l), []string{
			"--proxy-client-cert-file=/repo/_output/cluster/pki/front-proxy-client.crt",
			"--proxy-client-key-file=/repo/_output/cluster/pki/front-proxy-client.key",
			"--requestheader-client-ca-file=/repo/_output/cluster/pki/front-proxy-ca.crt",
			"--requestheader-allowed-names=front-proxy-client",
		}},
		"controller manager publishes the CA": {controllerManagerArgs(p, l), []string{"--root-ca-file=/repo/_output/cluster/pki/ca.crt"}},
		"scheduler":                           {schedulerArgs(l), []string{"--kubeconfig=/repo/_output/cluster/kube-scheduler.kubeconfig"}},
	} {
		t.Run(name, func(t *testing.T) {
			have := map[string]bool{}
			for _, a := range tc.args {
				have[a] = true
			}
			for _, w := range tc.want {
				if !have[w] {
					t.Errorf("args %v lack %s", tc.args, w)
				}
			}
		})
	}
}
