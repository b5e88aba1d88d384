package local

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
)

// startControlPlane starts etcd and the API server, each once the one before answers, then the
// controller manager and scheduler.
func (c *Cluster) startControlPlane(ctx context.Context, bin string, cs kubernetes.Interface) error {
	etcd, err := hostBinary("etcd")
	if err != nil {
		return err
	}
	if err := start(c.layout, component{Name: "etcd", Bin: etcd, Args: etcdArgs(c.layout)}); err != nil {
		return err
	}
	if err := pollErr(ctx, time.Minute, "etcd", etcdHealthy); err != nil {
		return err
	}
	apiserver := component{Name: "kube-apiserver", Bin: filepath.Join(bin, "kube-apiserver"), Args: apiserverArgs(c.plan, c.layout)}
	if err := start(c.layout, apiserver); err != nil {
		return err
	}
	err = pollErr(ctx, 2*time.Minute, "kube-apiserver /readyz", func() (bool, error) {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, err
	})
	if err != nil {
		return err
	}
	for _, comp := range []component{
		{Name: "kube-controller-manager", Bin: filepath.Join(bin, "kube-controller-manager"), Args: controllerManagerArgs(c.plan, c.layout)},
		{Name: "kube-scheduler", Bin: filepath.Join(bin, "kube-scheduler"), Args: schedulerArgs(c.layout)},
	} {
		if err := start(c.layout, comp); err != nil {
			return err
		}
	}
	return nil
}

func etcdHealthy() (bool, error) {
	resp, err := http.Get(etcdURL + "/health")
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("etcd /health: %s", resp.Status)
	}
	return true, nil
}

// startNode starts a node's containerd, gives it the system images (before kubelet, which would
// otherwise try to pull the sandbox image), then its kubelet and kube-proxy.
func (c *Cluster) startNode(ctx context.Context, bin string, n NodePlan, tarballs ...string) error {
	f := c.layout.node(n.Name)
	containerd, err := hostBinary("containerd")
	if err != nil {
		return err
	}
	if err := ensureDir(f.ContainerdRoot, f.ContainerdState, f.KubeletRoot, f.PodLogs, f.IPAMDir); err != nil {
		return err
	}
	cd := component{Name: "containerd-" + n.Name, Netns: n.Name, Bin: containerd,
		Args: []string{"--config", filepath.Join(f.Dir, "containerd.toml")}}
	if err := start(c.layout, cd); err != nil {
		return err
	}
	err = pollErr(ctx, time.Minute, "containerd of "+n.Name, func() (bool, error) {
		out, err := exec.CommandContext(ctx, "ctr", "-a", f.ContainerdSock, "version").CombinedOutput()
		if err != nil {
			return false, fmt.Errorf("%w: %s", err, out)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if err := c.loadImagesInto(ctx, n, tarballs); err != nil {
		return err
	}
	for _, comp := range []component{
		{Name: "kubelet-" + n.Name, Netns: n.Name, Bin: filepath.Join(bin, "kubelet"), Args: kubeletArgs(n, f)},
		{Name: "kube-proxy-" + n.Name, Netns: n.Name, Bin: filepath.Join(bin, "kube-proxy"),
			Args: kubeProxyArgs(filepath.Join(f.Dir, "kube-proxy.json"))},
	} {
		if err := start(c.layout, comp); err != nil {
			return err
		}
	}
	return nil
}

// hostBinary is the resolved path of a program from the host's packages, as /proc/<pid>/exe will
// show it once it runs.
func hostBinary(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found: run hack/cluster/deps.sh (%w)", name, err)
	}
	return filepath.EvalSymlinks(p)
}
