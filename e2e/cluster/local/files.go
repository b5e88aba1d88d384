package local

import (
	"os"
	"path/filepath"
	"time"
)

// writeFiles writes every file the cluster's processes read: key material, the tokens file,
// kubeconfigs, and the containerd, CNI, kubelet and kube-proxy configurations.
func (c *Cluster) writeFiles(sandboxImage string) error {
	p, l := c.plan, c.layout
	pki, err := newPKI(p, time.Now())
	if err != nil {
		return err
	}
	files := map[string][]byte{
		l.path("pki", "ca.crt"):                 pki.CACert,
		l.path("pki", "apiserver.crt"):          pki.ServingCert,
		l.path("pki", "apiserver.key"):          pki.ServingKey,
		l.path("pki", "sa.key"):                 pki.ServiceAccountKey,
		l.path("pki", "front-proxy-ca.crt"):     pki.FrontProxyCACert,
		l.path("pki", "front-proxy-client.crt"): pki.FrontProxyClientCert,
		l.path("pki", "front-proxy-client.key"): pki.FrontProxyClientKey,
	}
	var creds []credential
	// addKubeconfig gives user a token and writes its kubeconfig at path.
	addKubeconfig := func(path, user string) error {
		cred, err := newCredential(user)
		if err != nil {
			return err
		}
		creds = append(creds, cred)
		files[path], err = kubeconfig(p.APIServer(), pki.CACert, cred)
		return err
	}
	hostProxyKubeconfig := l.path("kube-proxy.kubeconfig")
	for path, user := range map[string]string{
		l.kubeconfigPath():                           "mlkube-admin",
		l.path("kube-controller-manager.kubeconfig"): "system:kube-controller-manager",
		l.path("kube-scheduler.kubeconfig"):          "system:kube-scheduler",
		hostProxyKubeconfig:                          "system:kube-proxy",
	} {
		if err := addKubeconfig(path, user); err != nil {
			return err
		}
	}
	if files[l.hostKubeProxyConfig()], err = kubeProxyConfig(p, p.hostProxyNode(), p.HostIP, hostProxyKubeconfig); err != nil {
		return err
	}
	for _, n := range p.Nodes {
		f := l.node(n.Name)
		if err := addKubeconfig(filepath.Join(f.Dir, "kubelet.kubeconfig"), "system:node:"+n.Name); err != nil {
			return err
		}
		proxyKubeconfig := filepath.Join(f.Dir, "kube-proxy.kubeconfig")
		if err := addKubeconfig(proxyKubeconfig, "system:kube-proxy:"+n.Name); err != nil {
			return err
		}
		if files[filepath.Join(f.Dir, "containerd.toml")], err = containerdConfig(f, sandboxImage, p.Registry()); err != nil {
			return err
		}
		if files[filepath.Join(f.CNIConfDir, "10-mlkube.conflist")], err = cniConfig(n, f.IPAMDir); err != nil {
			return err
		}
		if files[filepath.Join(f.Dir, "kubelet.json")], err = kubeletConfig(p, n, f); err != nil {
			return err
		}
		if files[filepath.Join(f.Dir, "kube-proxy.json")], err = kubeProxyConfig(p, n.Name, n.IP, proxyKubeconfig); err != nil {
			return err
		}
	}
	if files[l.path("pki", "tokens.csv")], err = tokensFile(creds); err != nil {
		return err
	}
	for path, data := range files {
		if err := ensureDir(filepath.Dir(path)); err != nil {
			return err
		}
		// Keys and tokens: readable by root only.
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
