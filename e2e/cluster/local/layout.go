package local

import "path/filepath"

// layout is where one cluster keeps its files. State (configs, PIDs, logs, etcd, containerd's
// root, kubelet's root) sits in the repository's _output/cluster, so that `down` finds what `up`
// made; sockets and runtime state sit under Run, because a unix socket path must stay under 108
// bytes wherever the repository is checked out.
type layout struct {
	State string
	Run   string
}

func (l layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.State}, elem...)...)
}

func (l layout) pidDir() string { return l.path("pids") }
func (l layout) logDir() string { return l.path("logs") }

// kubeconfigPath is the admin kubeconfig that users and tests read.
func (l layout) kubeconfigPath() string { return l.path("kubeconfig") }

// nodeFiles is where one node's containerd and kubelet keep their files.
type nodeFiles struct {
	Dir             string
	ContainerdRoot  string
	ContainerdState string
	ContainerdSock  string
	RuncRoot        string
	CNIConfDir      string
	IPAMDir         string
	KubeletRoot     string
	PodLogs         string
}

// nodesDir holds every node's files. It is a shared mount (shareMount): the node agents' CSI
// driver mounts into kubelet's pod directories under it with Bidirectional propagation, which
// containerd allows only below a shared mount, and this machine's / is private.
func (l layout) nodesDir() string { return l.path("nodes") }

// NodeNameVar stands for a node's name in a path that differs from node to node, as the node
// agents' DaemonSet expands it ($(NODE_NAME) in its args).
const NodeNameVar = "$(NODE_NAME)"

// kubeletDir is every node's kubelet root (nodeFiles.KubeletRoot) with NodeNameVar for the node.
func (l layout) kubeletDir() string { return l.node(NodeNameVar).KubeletRoot }

// kubeletDirFile, next to the kubeconfig, tells hack/cluster/deploy.sh the kubelets' root
// directory, which is not /var/lib/kubelet here.
func (l layout) kubeletDirFile() string { return l.path("kubelet-dir") }

func (l layout) node(name string) nodeFiles {
	dir, run := filepath.Join(l.nodesDir(), name), filepath.Join(l.Run, name)
	return nodeFiles{
		Dir:             dir,
		ContainerdRoot:  filepath.Join(dir, "containerd"),
		ContainerdState: filepath.Join(run, "containerd"),
		ContainerdSock:  filepath.Join(run, "containerd.sock"),
		RuncRoot:        filepath.Join(run, "runc"),
		CNIConfDir:      filepath.Join(dir, "cni", "net.d"),
		IPAMDir:         filepath.Join(dir, "cni", "ipam"),
		KubeletRoot:     filepath.Join(dir, "kubelet"),
		PodLogs:         filepath.Join(dir, "pods"),
	}
}
