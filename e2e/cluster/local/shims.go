package local

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// shims finds the containerd shims serving this cluster's containerds: their command line names
// one of our sockets as -address.
func (c *Cluster) shims() []pidRecord {
	socks := map[string]bool{}
	for _, n := range c.plan.Nodes {
		socks[c.layout.node(n.Name).ContainerdSock] = true
	}
	var out []pidRecord
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-address" && socks[args[i+1]] {
				dir := filepath.Dir(p)
				exe, _ := os.Readlink(filepath.Join(dir, "exe"))
				if pid, err := strconv.Atoi(filepath.Base(dir)); err == nil {
					out = append(out, pidRecord{Name: "shim", PID: pid, Bin: strings.TrimSuffix(exe, " (deleted)")})
				}
				break
			}
		}
	}
	return out
}

// shimSocketDir is where containerd 1.6's runc shims listen, whatever containerd's own state dir.
const shimSocketDir = "/run/containerd/s"

// shimSocket is the socket of the shim for task id in namespace ns of the containerd at address,
// named as containerd 1.6 names it (runtime/v2/shim.SocketAddress).
func shimSocket(address, ns, id string) string {
	return filepath.Join(shimSocketDir, fmt.Sprintf("%x", sha256.Sum256([]byte(filepath.Join(address, ns, id)))))
}

// removeShimSockets removes the sockets of killed shims (a shim that exits cleanly removes its
// own). The tasks' bundle directories in each containerd's state name them.
func (c *Cluster) removeShimSockets() error {
	for _, n := range c.plan.Nodes {
		f := c.layout.node(n.Name)
		bundles, err := filepath.Glob(filepath.Join(f.ContainerdState, "io.containerd.runtime.v2.task", "*", "*"))
		if err != nil {
			return err
		}
		for _, b := range bundles {
			sock := shimSocket(f.ContainerdSock, filepath.Base(filepath.Dir(b)), filepath.Base(b))
			if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
