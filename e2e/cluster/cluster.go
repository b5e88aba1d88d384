// Package cluster gives the e2e suite a real Kubernetes cluster behind one small interface: a kind
// cluster where a container engine answers (a laptop, GitHub Actions), otherwise the local
// provider's docker-less cluster (this project's build and CI machines). Cluster state lives under
// the repository's _output/cluster, so `down` works from another process than `up`.
package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/mlkube/mlkube/e2e/cluster/kind"
	"github.com/mlkube/mlkube/e2e/cluster/local"
	"github.com/mlkube/mlkube/internal/repo"
)

// Provider makes and removes one cluster.
type Provider interface {
	Name() string
	// Up creates the cluster and writes its admin kubeconfig.
	Up(ctx context.Context) error
	// Kubeconfig is the path of the admin kubeconfig.
	Kubeconfig() string
	// LoadImages puts image tarballs into every node, for pods with imagePullPolicy IfNotPresent.
	LoadImages(ctx context.Context, tarballs []string) error
	// Down removes everything Up made.
	Down(ctx context.Context) error
}

var (
	_ Provider = (*local.Cluster)(nil)
	_ Provider = (*kind.Cluster)(nil)
)

// ProviderEnv forces a provider: "kind" or "local".
const ProviderEnv = "MLKUBE_CLUSTER_PROVIDER"

// Nodes is how many nodes a cluster has (kind: workers, besides its control plane); two, so that
// node-local behaviour (one pod per node, internalTrafficPolicy: Local) is really tested.
const Nodes = 2

// Select returns the provider for this machine, with state under <repo>/_output/cluster.
func Select() (Provider, error) {
	name, err := providerName(os.Getenv(ProviderEnv), engineAnswers)
	if err != nil {
		return nil, err
	}
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	state, err := repo.Output("cluster")
	if err != nil {
		return nil, err
	}
	if name == "kind" {
		return kind.New(state, Nodes, os.Getenv(kind.NodeImageEnv)), nil
	}
	return local.New(root, state, Nodes)
}

// providerName picks kind or local: forced by env, else kind when a container engine answers.
func providerName(env string, engineAnswers func() bool) (string, error) {
	switch env {
	case "kind", "local":
		return env, nil
	case "":
		if engineAnswers() {
			return "kind", nil
		}
		return "local", nil
	default:
		return "", fmt.Errorf("%s=%q: want kind or local", ProviderEnv, env)
	}
}

// engineAnswers reports whether `docker info` succeeds: a docker (or podman's docker) engine is
// there for kind to use.
func engineAnswers() bool {
	return exec.Command("docker", "info").Run() == nil
}
