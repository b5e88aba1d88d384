// Package local runs a multi-node Kubernetes cluster on this machine without a container engine:
// etcd and the control plane on the host, and per node a network namespace with its own containerd,
// kubelet and kube-proxy (see docs/design/local-cluster.md). It needs root, cgroups v1, and the
// Debian packages hack/cluster/deps.sh installs; Kubernetes and CoreDNS are built from the Go module
// proxy by hack/build/pinned.sh (kube and coredns).
package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/mlkube/mlkube/internal/images"
	"github.com/mlkube/mlkube/internal/repo"
)

// runDir holds sockets and runtime state; see layout.
const runDir = "/run/mlkube"

// Cluster is the local provider.
type Cluster struct {
	root   string // module root, for the hack/ scripts and image builds
	plan   Plan
	layout layout
	logf   func(format string, args ...any)
}

// New is a cluster of nodes nodes whose state lives in stateDir.
func New(root, stateDir string, nodes int) (*Cluster, error) {
	p, err := NewPlan(nodes)
	if err != nil {
		return nil, err
	}
	return &Cluster{root: root, plan: p, layout: layout{State: stateDir, Run: runDir}, logf: func(string, ...any) {}}, nil
}

// SetLogf makes the cluster report progress through logf: Up's steps are slow enough that a person
// wants to see them.
func (c *Cluster) SetLogf(logf func(format string, args ...any)) { c.logf = logf }

func (c *Cluster) Name() string { return "local" }

func (c *Cluster) Kubeconfig() string { return c.layout.kubeconfigPath() }

// Plan is the cluster's address plan.
func (c *Cluster) Plan() Plan { return c.plan }

// Down stops the cluster and removes everything it made but its logs.
func (c *Cluster) Down(ctx context.Context) error {
	start := time.Now()
	if err := c.teardown(ctx); err != nil {
		return err
	}
	left, err := c.Leftovers()
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("teardown left %v", left)
	}
	c.logf("down in %v", time.Since(start).Round(time.Millisecond))
	return nil
}

// LoadImages imports image tarballs into every node's containerd, where pods with
// imagePullPolicy IfNotPresent or Never find them.
func (c *Cluster) LoadImages(ctx context.Context, tarballs []string) error {
	for _, n := range c.plan.Nodes {
		if err := c.loadImagesInto(ctx, n, tarballs); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) loadImagesInto(ctx context.Context, n NodePlan, tarballs []string) error {
	sock := c.layout.node(n.Name).ContainerdSock
	for _, t := range tarballs {
		out, err := exec.CommandContext(ctx, "ctr", "-a", sock, "-n", "k8s.io", "images", "import", t).CombinedOutput()
		if err != nil {
			return fmt.Errorf("importing %s into %s: %w: %s", t, n.Name, err, out)
		}
	}
	return nil
}

// binaries is the directory of the Kubernetes binaries, built on first use.
func (c *Cluster) binaries(ctx context.Context) (string, error) {
	return repo.Script(ctx, c.root, "hack/build/pinned.sh", []string{"kube"})
}

// systemImages builds the images the cluster itself runs: the pod sandbox and CoreDNS.
func (c *Cluster) systemImages(ctx context.Context) (pause, coredns string, err error) {
	b := images.Builder{Root: c.root, OutDir: c.layout.path("images")}
	if pause, err = b.Build(ctx, images.Pause); err != nil {
		return "", "", err
	}
	coredns, err = b.Build(ctx, images.CoreDNS)
	return pause, coredns, err
}

// ensureDir makes dirs with their parents.
func ensureDir(dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return nil
}
