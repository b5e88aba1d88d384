package local

import (
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfig is a kubeconfig for one user of the cluster at server.
func kubeconfig(server string, caPEM []byte, c credential) ([]byte, error) {
	const name = "mlkube-local"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[c.User] = &clientcmdapi.AuthInfo{Token: c.Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: c.User}
	cfg.CurrentContext = name
	return clientcmd.Write(*cfg)
}
