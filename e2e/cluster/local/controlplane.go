package local

import "path/filepath"

// etcd listens on loopback only, on ports away from etcd's defaults so a developer's own etcd
// (or envtest's) does not collide with it.
const etcdURL = "http://127.0.0.1:23790"

func etcdArgs(l layout) []string {
	const peer = "http://127.0.0.1:23800"
	return []string{
		"--name=mlkube",
		"--data-dir=" + l.path("etcd"),
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=mlkube=" + peer,
	}
}

func apiserverArgs(p Plan, l layout) []string {
	return []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + p.HostIP.String(),
		"--advertise-address=" + p.HostIP.String(),
		"--secure-port=6443",
		"--tls-cert-file=" + l.path("pki", "apiserver.crt"),
		"--tls-private-key-file=" + l.path("pki", "apiserver.key"),
		"--token-auth-file=" + l.path("pki", "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=" + p.ServiceCIDR.String(),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + l.path("pki", "sa.key"),
		"--service-account-signing-key-file=" + l.path("pki", "sa.key"),
		// Node names do not resolve; the API server must dial kubelets by their IP.
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--allow-privileged=true",
		"--cert-dir=" + l.path("pki", "apiserver"),
		// The aggregation layer (metrics.k8s.io from metrics-server): the API server proxies with
		// the front proxy's client certificate and names the user in these headers; aggregated
		// servers read the CA and names from kube-system/extension-apiserver-authentication.
		"--proxy-client-cert-file=" + l.path("pki", "front-proxy-client.crt"),
		"--proxy-client-key-file=" + l.path("pki", "front-proxy-client.key"),
		"--requestheader-client-ca-file=" + l.path("pki", "front-proxy-ca.crt"),
		"--requestheader-allowed-names=" + frontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
	}
}

func controllerManagerArgs(p Plan, l layout) []string {
	return []string{
		"--kubeconfig=" + l.path("kube-controller-manager.kubeconfig"),
		"--bind-address=127.0.0.1",
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + l.path("pki", "sa.key"),
		// Published to every namespace as kube-root-ca.crt: how pods verify the API server.
		"--root-ca-file=" + l.path("pki", "ca.crt"),
		"--service-cluster-ip-range=" + p.ServiceCIDR.String(),
		"--cert-dir=" + l.path("pki", "kube-controller-manager"),
	}
}

func schedulerArgs(l layout) []string {
	return []string{
		"--kubeconfig=" + l.path("kube-scheduler.kubeconfig"),
		"--bind-address=127.0.0.1",
		"--leader-elect=false",
	}
}

func kubeProxyArgs(configPath string) []string {
	return []string{"--config=" + configPath, "--v=2"}
}

// hostKubeProxyConfig is where the host namespace's kube-proxy reads its configuration.
func (l layout) hostKubeProxyConfig() string { return filepath.Join(l.State, "kube-proxy.json") }
