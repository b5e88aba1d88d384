// Package kind is the cluster provider for machines with a container engine: a kind cluster of one
// control plane and N workers, made through sigs.k8s.io/kind/pkg/cluster, with image tarballs
// loaded into every node as `kind load image-archive` does.
package kind

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cmd"
)

// clusterPrefix begins the name of every kind cluster of mlkube's e2e (and of its node containers).
const clusterPrefix = "mlkube-e2e-"

// clusterName is the kind cluster of the checkout whose state lives in state. Two checkouts on one
// engine (a CI run next to a developer's, say) each get their own cluster, so neither finds the
// other's nodes in its way nor deletes them; the same checkout always gets the same name, so it
// finds what an interrupted run of its own left.
func clusterName(state string) string {
	if abs, err := filepath.Abs(state); err == nil {
		state = abs
	}
	sum := sha256.Sum256([]byte(state))
	return clusterPrefix + hex.EncodeToString(sum[:4])
}

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
	name := clusterName(c.state)
	if err := removeLeftovers(p, name, c.Kubeconfig(), os.Stderr); err != nil {
		return err
	}
	err := p.Create(name,
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
		if lerr := p.CollectLogs(name, c.logDir()); lerr != nil {
			err = fmt.Errorf("%w; collecting the nodes' logs also failed: %w", err, lerr)
		}
		if derr := p.Delete(name, c.Kubeconfig()); derr != nil {
			err = fmt.Errorf("%w; deleting the failed cluster also failed: %w", err, derr)
		}
	}
	return err
}

// nodeEngine is the part of kind's provider that removeLeftovers uses.
type nodeEngine interface {
	ListNodes(name string) ([]nodes.Node, error)
	Delete(name, kubeconfig string) error
}

// removeLeftovers deletes the nodes of cluster name that a run of this checkout left behind when it
// was stopped before its teardown: kind refuses to create a cluster whose nodes exist ("node(s)
// already exist"), and nothing else would ever remove them.
func removeLeftovers(e nodeEngine, name, kubeconfig string, log io.Writer) error {
	left, err := e.ListNodes(name)
	if err != nil {
		return fmt.Errorf("listing the nodes of kind cluster %s: %w", name, err)
	}
	if len(left) == 0 {
		return nil
	}
	fmt.Fprintf(log, "kind: deleting the %d node(s) of cluster %s that an interrupted run of this checkout left\n", len(left), name)
	if err := e.Delete(name, kubeconfig); err != nil {
		return fmt.Errorf("deleting the nodes an interrupted run left in kind cluster %s: %w", name, err)
	}
	return nil
}

// logDir is where a failed Up leaves the nodes' logs (journal, kubelet, containerd, pods), in the
// same place as the local provider's.
func (c *Cluster) logDir() string { return filepath.Join(c.state, "logs") }

// LoadImages loads each tarball into each node's containerd.
func (c *Cluster) LoadImages(ctx context.Context, tarballs []string) error {
	internal, err := provider().ListInternalNodes(clusterName(c.state))
	if err != nil {
		return err
	}
	return loadArchives(internal, tarballs)
}

// Down deletes the cluster's containers and its kubeconfig entry.
func (c *Cluster) Down(ctx context.Context) error {
	return provider().Delete(clusterName(c.state), c.Kubeconfig())
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
