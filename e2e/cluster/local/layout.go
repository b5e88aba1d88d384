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

func (l layout) node(name string) nodeFiles {
	dir, run := l.path("nodes", name), filepath.Join(l.Run, name)
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
