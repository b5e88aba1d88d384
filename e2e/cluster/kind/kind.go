// Package kind is the cluster provider for machines with a container engine: a kind cluster of one
// control plane and N workers, made through sigs.k8s.io/kind/pkg/cluster, with image tarballs
// loaded into every node as `kind load image-archive` does.
package kind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cmd"
)

// ClusterName names the kind cluster (and the prefix of its node containers).
const ClusterName = "mlkube-e2e"

// NodeImageEnv names the node image to run; empty is kind's own default, the image its release
// publishes, as users of kind have it. A machine that cannot pull it names one built without a
// registry.
const NodeImageEnv = "MLKUBE_KIND_NODE_IMAGE"

// Cluster is the kind provider.
type Cluster struct {
	state     string
	workers   int
	nodeImage string
}

// New is a kind cluster with workers worker nodes running nodeImage (kind's default when empty),
// whose kubeconfig is written under state.
func New(state string, workers int, nodeImage string) *Cluster {
	return &Cluster{state: state, workers: workers, nodeImage: nodeImage}
}

func (c *Cluster) Name() string { return "kind" }

func (c *Cluster) Kubeconfig() string { return filepath.Join(c.state, "kubeconfig") }

// Up creates the cluster and waits for its nodes to be Ready.
func (c *Cluster) Up(ctx context.Context) error {
	if err := os.MkdirAll(c.state, 0o755); err != nil {
		return err
	}
	p := provider()
	err := p.Create(ClusterName,
		cluster.CreateWithV1Alpha4Config(clusterConfig(c.workers)),
		// An empty image keeps kind's default.
		cluster.CreateWithNodeImage(c.nodeImage),
		cluster.CreateWithKubeconfigPath(c.Kubeconfig()),
		cluster.CreateWithWaitForReady(5*time.Minute),
		// Kept on failure only until its logs are out (below): kind would delete the nodes, and
		// with them the only account of why.
		cluster.CreateWithRetain(true),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
	)
	if err != nil {
		if lerr := p.CollectLogs(ClusterName, c.logDir()); lerr != nil {
			err = fmt.Errorf("%w; collecting the nodes' logs also failed: %w", err, lerr)
		}
		if derr := p.Delete(ClusterName, c.Kubeconfig()); derr != nil {
			err = fmt.Errorf("%w; deleting the failed cluster also failed: %w", err, derr)
		}
	}
	return err
}

// logDir is where a failed Up leaves the nodes' logs (journal, kubelet, containerd, pods), in the
// same place as the local provider's.
func (c *Cluster) logDir() string { return filepath.Join(c.state, "logs") }

// LoadImages loads each tarball into each node's containerd.
func (c *Cluster) LoadImages(ctx context.Context, tarballs []string) error {
	nodes, err := provider().ListInternalNodes(ClusterName)
	if err != nil {
		return err
	}
	return loadArchives(nodes, tarballs)
}

// Down deletes the cluster's containers and its kubeconfig entry.
func (c *Cluster) Down(ctx context.Context) error {
	return provider().Delete(ClusterName, c.Kubeconfig())
}

// provider talks to whichever engine answers (docker, nerdctl, podman), docker if none is found,
// so that the error then names docker.
func provider() *cluster.Provider {
	engine, err := cluster.DetectNodeProvider()
	if err != nil {
		engine = cluster.ProviderWithDocker()
	}
	return cluster.NewProvider(engine, cluster.ProviderWithLogger(cmd.NewLogger()))
}

// kubeletOnCgroupV1 lets the kubelet start on a cgroup v1 host, which it refuses by default since
// Kubernetes 1.35 (KubeletConfiguration failCgroupV1); on a cgroup v2 host the setting does
// nothing, so every cluster gets it.
const kubeletOnCgroupV1 = `kind: KubeletConfiguration
apiVersion: kubelet.config.k8s.io/v1beta1
failCgroupV1: false
`

// clusterConfig is one control plane and workers workers.
func clusterConfig(workers int) *v1alpha4.Cluster {
	cfg := &v1alpha4.Cluster{
		TypeMeta:             v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Nodes:                []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}},
		KubeadmConfigPatches: []string{kubeletOnCgroupV1},
	}
	for range workers {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole})
	}
	return cfg
}
