package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mlkube/mlkube/internal/images"
)

// bringUp is one run of Up: what its phases hand on to each other.
type bringUp struct {
	*Cluster
	bin            string // Kubernetes binaries
	pause, coredns string // system image tarballs
	cs             *kubernetes.Clientset
}

// Up brings the cluster up from nothing: it first clears whatever an earlier cluster left, and
// returns once every node is Ready, CoreDNS serves, the default service account exists (pods
// cannot be created before it does), and the host reaches ClusterIPs (the API server calls
// webhooks through them).
func (c *Cluster) Up(ctx context.Context) error {
	u := &bringUp{Cluster: c}
	began := time.Now()
	for _, phase := range []struct {
		done string
		run  func(context.Context) error
	}{
		{"cleared earlier state", u.clear},
		{"binaries and system images", u.prepare},
		{"files, network, cgroups", u.host},
		{"control plane", u.controlPlane},
		{"nodes Ready", u.nodes},
		{"CoreDNS, host Service rules: up", u.addons},
	} {
		if err := phase.run(ctx); err != nil {
			return err
		}
		c.logf("%-32s %6.1fs", phase.done, time.Since(began).Seconds())
	}
	return nil
}

func (u *bringUp) clear(ctx context.Context) error {
	if err := u.teardown(ctx); err != nil {
		return fmt.Errorf("clearing an earlier cluster: %w", err)
	}
	if err := u.claimOwner(); err != nil {
		return err
	}
	if err := os.RemoveAll(u.layout.logDir()); err != nil {
		return err
	}
	return ensureDir(u.layout.pidDir(), u.layout.logDir(), u.layout.Run)
}

func (u *bringUp) prepare(ctx context.Context) (err error) {
	if u.bin, err = u.binaries(ctx); err != nil {
		return err
	}
	u.pause, u.coredns, err = u.systemImages(ctx)
	return err
}

// host writes the cluster's files and changes the host: sysctls (saved first), network, cgroups.
func (u *bringUp) host(context.Context) error {
	if err := u.writeFiles(images.Pause.Ref); err != nil {
		return err
	}
	if err := os.WriteFile(u.layout.kubeletDirFile(), []byte(u.layout.kubeletDir()+"\n"), 0o644); err != nil {
		return err
	}
	if err := shareMount(u.layout.nodesDir()); err != nil {
		return err
	}
	if err := saveSysctls(u.layout.path("sysctl.json")); err != nil {
		return err
	}
	if err := checkPlanIsFree(u.plan); err != nil {
		return err
	}
	if err := setupNetwork(u.plan); err != nil {
		return err
	}
	roots, err := cgroupV1Roots()
	if err != nil {
		return err
	}
	for _, n := range u.plan.Nodes {
		if err := createNodeCgroups(roots, n.Name); err != nil {
			return err
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", u.Kubeconfig())
	if err != nil {
		return err
	}
	u.cs, err = kubernetes.NewForConfig(cfg)
	return err
}

func (u *bringUp) controlPlane(ctx context.Context) error {
	return u.startControlPlane(ctx, u.bin, u.cs)
}

func (u *bringUp) nodes(ctx context.Context) error {
	for _, n := range u.plan.Nodes {
		if err := u.startNode(ctx, u.bin, n, u.pause, u.coredns); err != nil {
			return err
		}
	}
	return waitNodesReady(ctx, u.cs, len(u.plan.Nodes))
}

// addons starts the host's kube-proxy (only now: the node it stands in for exists, see
// Plan.hostProxyNode) and CoreDNS, and waits for both.
func (u *bringUp) addons(ctx context.Context) error {
	hostProxy := component{Name: "kube-proxy-host", Bin: filepath.Join(u.bin, "kube-proxy"),
		Args: kubeProxyArgs(u.layout.hostKubeProxyConfig())}
	if err := start(u.layout, hostProxy); err != nil {
		return err
	}
	if err := installDNS(ctx, u.cs, u.plan, images.CoreDNS.Ref); err != nil {
		return err
	}
	if err := waitDNSAndServiceAccount(ctx, u.cs); err != nil {
		return err
	}
	return pollErr(ctx, time.Minute, "the host's kube-proxy rules", hostServiceRules)
}
