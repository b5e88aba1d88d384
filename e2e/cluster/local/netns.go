package local

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// netnsDir is where `ip netns` and containerd's CRI keep named network namespaces.
const netnsDir = "/var/run/netns"

func netnsPath(name string) string { return filepath.Join(netnsDir, name) }

// run runs a command, returning its combined output in the error when it fails.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// ipCommands lays out the network: a bridge holding the API server's address, and per node a
// namespace joined to the bridge by a veth. The host routes each node's pod subnet to the node;
// a node routes only the cluster's own prefixes to the host and has no default route, so nothing
// in the cluster can reach an address off this machine. The service CIDR is routed to the bridge
// on the host, so a ClusterIP packet kube-proxy did not rewrite stays on the bridge rather than
// leaving through the uplink.
func ipCommands(p Plan) [][]string {
	cmds := [][]string{
		{"link", "add", p.Bridge, "type", "bridge"},
		{"addr", "add", p.nodeAddr(p.HostIP), "dev", p.Bridge},
		{"link", "set", p.Bridge, "up"},
		{"route", "add", p.ServiceCIDR.String(), "dev", p.Bridge, "src", p.HostIP.String()},
	}
	for _, n := range p.Nodes {
		in := func(args ...string) []string { return append([]string{"-n", n.Name}, args...) }
		cmds = append(cmds,
			[]string{"netns", "add", n.Name},
			[]string{"link", "add", n.HostVeth, "type", "veth", "peer", "name", n.NodeVeth, "netns", n.Name},
			[]string{"link", "set", n.HostVeth, "master", p.Bridge, "up"},
			in("link", "set", "lo", "up"),
			in("addr", "add", p.nodeAddr(n.IP), "dev", n.NodeVeth),
			in("link", "set", n.NodeVeth, "up"),
			in("route", "add", p.PodCIDR.String(), "via", p.HostIP.String()),
			in("route", "add", p.ServiceCIDR.String(), "via", p.HostIP.String()),
			[]string{"route", "add", n.PodCIDR.String(), "via", n.IP.String()},
		)
	}
	return cmds
}

func setupNetwork(p Plan) error {
	for _, args := range ipCommands(p) {
		if err := run("ip", args...); err != nil {
			return err
		}
	}
	// Forwarding: on the host between nodes, in each node between its pods and the bridge.
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_forward", []byte("1"), 0o644); err != nil {
		return err
	}
	for _, n := range p.Nodes {
		if err := run("nsenter", "--net="+netnsPath(n.Name), "--", "sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"); err != nil {
			return err
		}
	}
	return nil
}

// teardownNetwork deletes the node namespaces (which destroys their veths) and the bridge (which
// takes its routes along). Absent pieces are fine: teardown also clears half-built clusters.
func teardownNetwork(p Plan) error {
	for _, n := range p.Nodes {
		if err := removeNetns(n.Name); err != nil {
			return err
		}
	}
	for _, dev := range append(hostVeths(p), p.Bridge) {
		if !linkExists(dev) {
			continue
		}
		// A veth whose peer's namespace was just deleted goes away on its own, asynchronously:
		// it may vanish between the check and the delete, which is what was wanted.
		if err := run("ip", "link", "del", dev); err != nil && linkExists(dev) {
			return err
		}
	}
	return nil
}

func linkExists(dev string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", dev))
	return err == nil
}

func hostVeths(p Plan) []string {
	var out []string
	for _, n := range p.Nodes {
		out = append(out, n.HostVeth)
	}
	return out
}

// orphanedSandboxNetns lists the pod namespaces containerd's CRI made ("cni-<uuid>") that no
// process uses any more: what a killed pod leaves behind. A namespace in use belongs to a live
// pod of some runtime and is not ours to remove.
func orphanedSandboxNetns() ([]string, error) {
	entries, err := os.ReadDir(netnsDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	inUse := netnsInodesInUse()
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "cni-") {
			continue
		}
		var st syscall.Stat_t
		if err := syscall.Stat(netnsPath(e.Name()), &st); err != nil || !inUse[st.Ino] {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// netnsInodesInUse is the set of network namespace inodes some process is in.
func netnsInodesInUse() map[uint64]bool {
	used := map[uint64]bool{}
	procs, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	for _, p := range procs {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			used[st.Ino] = true
		}
	}
	return used
}

// removeNetns unmounts and removes a named namespace, as `ip netns del` does, but also when it is
// already half gone (unmounted, or not there at all).
func removeNetns(name string) error {
	p := netnsPath(name)
	if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
		return &os.PathError{Op: "unmount", Path: p, Err: err}
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// unmountEmptyNetnsDir undoes what the first `ip netns add` on a machine does: bind-mount the
// netns directory onto itself (to make it shared). Once no namespace is left in it, it goes.
func unmountEmptyNetnsDir() error {
	entries, err := os.ReadDir(netnsDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // no namespace was ever added, or the directory is already gone
	case err != nil:
		return err
	case len(entries) > 0:
		return nil // still in use
	}
	mounts, err := readMounts()
	if err != nil {
		return err
	}
	dir, err := filepath.EvalSymlinks(netnsDir) // /var/run is a link to /run
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if m.Point == dir {
			return syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	}
	return nil
}
