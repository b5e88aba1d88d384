package local

import (
	"os"
	"path/filepath"
)

// Leftovers lists what of a cluster is still on the machine: live processes (its own, shims,
// pods), mounts, namespaces, devices, cgroups and host iptables chains. Empty after a clean Down.
func (c *Cluster) Leftovers() ([]string, error) {
	var left []string
	recs, err := readPIDRecords(c.layout)
	if err != nil {
		return nil, err
	}
	for _, r := range append(recs, c.shims()...) {
		if alive(r.PID, r.Bin) {
			left = append(left, "process "+r.Name)
		}
	}
	mounts, err := readMounts()
	if err != nil {
		return nil, err
	}
	for _, m := range mountsUnder(mounts, c.layout.State, c.layout.Run) {
		left = append(left, "mount "+m)
	}
	orphans, err := orphanedSandboxNetns()
	if err != nil {
		return nil, err
	}
	for _, n := range orphans {
		left = append(left, "netns "+n)
	}
	roots, err := cgroupV1Roots()
	if err != nil {
		return nil, err
	}
	for _, n := range c.plan.Nodes {
		if exists(netnsPath(n.Name)) {
			left = append(left, "netns "+n.Name)
		}
		for _, root := range roots {
			if exists(filepath.Join(root, n.Name)) {
				left = append(left, "cgroup "+filepath.Join(root, n.Name))
			}
		}
	}
	for _, dev := range append(hostVeths(c.plan), c.plan.Bridge) {
		if exists(filepath.Join("/sys/class/net", dev)) {
			left = append(left, "device "+dev)
		}
	}
	links, err := containerLogLinksTo(c.layout.State)
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		left = append(left, "log link "+l)
	}
	if owner, err := readOwner(); err != nil || owner == c.layout.State {
		left = append(left, "owner file "+ownerFile)
	}
	chains, err := hostKubeChains()
	if err != nil {
		return nil, err
	}
	for _, ch := range chains {
		left = append(left, "iptables "+ch)
	}
	return left, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
