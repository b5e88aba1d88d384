package local

import (
	"strings"
	"testing"
)

// The kubelet directory deploy.sh gives the node agents' DaemonSet must be each node's own kubelet
// root once the DaemonSet puts the node's name in, and all of them must lie in the shared mount.
func TestKubeletDirNamesEachNodesKubeletRoot(t *testing.T) {
	l := layout{State: "/state", Run: "/run/x"}
	for _, node := range []string{"mlkube-node-1", "mlkube-node-2"} {
		if got, want := strings.ReplaceAll(l.kubeletDir(), NodeNameVar, node), l.node(node).KubeletRoot; got != want {
			t.Errorf("%s: kubelet dir %s, want %s", node, got, want)
		}
		if !strings.HasPrefix(l.node(node).KubeletRoot, l.nodesDir()+"/") {
			t.Errorf("%s's kubelet root %s is outside the shared mount %s", node, l.node(node).KubeletRoot, l.nodesDir())
		}
	}
	if prefix, _, _ := strings.Cut(l.kubeletDir(), NodeNameVar); strings.TrimSuffix(prefix, "/") != l.nodesDir() {
		t.Errorf("the part of %s before the node's name is %s, want the shared mount %s (deploy.sh mounts that)", l.kubeletDir(), prefix, l.nodesDir())
	}
}
