package local

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// teardown stops and removes everything a cluster made: whether Up finished, failed halfway, or
// its processes died with an earlier session and left mounts, devices and iptables chains behind.
// It is also Up's first step. Logs stay, for a post-mortem.
func (c *Cluster) teardown(ctx context.Context) error {
	if err := c.settleOwner(ctx); err != nil {
		return err
	}
	recs, err := readPIDRecords(c.layout)
	if err != nil {
		return err
	}
	stop := func(prefixes ...string) func() error {
		return func() error { return stopProcs(ctx, pick(recs, prefixes...), 20*time.Second) }
	}
	// Every step runs even when one fails, so a single stuck piece does not leave the rest.
	steps := []func() error{
		// Kubelets first, as they would restart the pods stopped next; the API server before
		// etcd, so that it shuts down at once instead of retrying its storage.
		stop("kubelet-"),
		func() error { return c.stopPods(ctx) },
		stop("kube-proxy-", "containerd-", "kube-scheduler", "kube-controller-manager"),
		stop("kube-apiserver"),
		stop("etcd"),
		removeHostKubeChains,
		func() error { return unmountUnder(c.layout.State, c.layout.Run) },
		c.removeSandboxNetns,
		c.removeContainerLogLinks,
		c.removeShimSockets,
		func() error { return teardownNetwork(c.plan) },
		unmountEmptyNetnsDir,
		c.removeCgroups,
		func() error { return restoreSysctls(c.layout.path("sysctl.json")) },
		c.removeState,
		c.releaseOwner,
	}
	var errs []error
	for _, step := range steps {
		errs = append(errs, step())
	}
	return errors.Join(errs...)
}

// pick returns the records whose name starts with one of prefixes.
func pick(recs []pidRecord, prefixes ...string) []pidRecord {
	var out []pidRecord
	for _, r := range recs {
		for _, p := range prefixes {
			if strings.HasPrefix(r.Name, p) {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// stopPods kills every process in the nodes' cgroups (the pods' containers), then the containerd
// shims that ran them. While containerd still runs it deletes the dead tasks and the shims exit by
// themselves; shims left from a containerd that is gone are killed.
func (c *Cluster) stopPods(ctx context.Context) error {
	roots, err := cgroupV1Roots()
	if err != nil {
		return err
	}
	podPIDs := func() ([]int, error) {
		var all []int
		for _, n := range c.plan.Nodes {
			for _, root := range roots {
				pids, err := cgroupPIDs(filepath.Join(root, n.Name))
				if err != nil {
					return nil, err
				}
				all = append(all, pids...)
			}
		}
		return all, nil
	}
	err = pollErr(ctx, 20*time.Second, "pod processes to end", func() (bool, error) {
		pids, err := podPIDs()
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return err == nil && len(pids) == 0, err
	})
	if err != nil {
		return err
	}
	return stopProcs(ctx, c.shims(), 10*time.Second)
}

func (c *Cluster) removeSandboxNetns() error {
	names, err := orphanedSandboxNetns()
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := removeNetns(n); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) removeCgroups() error {
	roots, err := cgroupV1Roots()
	if err != nil {
		return err
	}
	for _, n := range c.plan.Nodes {
		for _, root := range roots {
			if err := removeCgroupTree(filepath.Join(root, n.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// keptState survives teardown: logs for a post-mortem, and the host's sysctl values if restoring
// them failed, for the next teardown to try again.
var keptState = map[string]bool{"logs": true, "sysctl.json": true}

// removeState deletes the runtime directory and all state but keptState.
func (c *Cluster) removeState() error {
	if err := os.RemoveAll(c.layout.Run); err != nil {
		return err
	}
	entries, err := os.ReadDir(c.layout.State)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if keptState[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(c.layout.State, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// containerLogLinks is where kubelet links each container's log, whatever its podLogsDir.
const containerLogLinks = "/var/log/containers"

// removeContainerLogLinks removes the links kubelets made to logs under the cluster's state.
func (c *Cluster) removeContainerLogLinks() error {
	links, err := containerLogLinksTo(c.layout.State)
	if err != nil {
		return err
	}
	for _, l := range links {
		if err := os.Remove(l); err != nil {
			return err
		}
	}
	return nil
}

// containerLogLinksTo lists the links in containerLogLinks that point below dir.
func containerLogLinksTo(dir string) ([]string, error) {
	links, err := filepath.Glob(filepath.Join(containerLogLinks, "*.log"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range links {
		if target, err := os.Readlink(l); err == nil && strings.HasPrefix(target, dir+"/") {
			out = append(out, l)
		}
	}
	return out, nil
}
