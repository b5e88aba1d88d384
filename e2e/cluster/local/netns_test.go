package local

import (
	"slices"
	"strings"
	"testing"
)

// TestIPCommands: every route the plan adds stays on this machine; in particular no node gets a
// default route, and the host routes the service CIDR to the bridge, not its uplink.
func TestIPCommands(t *testing.T) {
	p, _ := testCluster(t)
	cmds := ipCommands(p)
	var lines []string
	for _, c := range cmds {
		lines = append(lines, strings.Join(c, " "))
	}
	for _, want := range []string{
		"link add mlkube0 type bridge",
		"addr add 10.250.0.1/24 dev mlkube0",
		"route add 10.96.0.0/16 dev mlkube0 src 10.250.0.1",
		"netns add mlkube-node-2",
		"link add mlkube-h2 type veth peer name mlkube-n2 netns mlkube-node-2",
		"link set mlkube-h2 master mlkube0 up",
		"-n mlkube-node-2 addr add 10.250.0.12/24 dev mlkube-n2",
		"-n mlkube-node-2 route add 10.244.0.0/16 via 10.250.0.1",
		"-n mlkube-node-2 route add 10.96.0.0/16 via 10.250.0.1",
		"route add 10.244.2.0/24 via 10.250.0.12",
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("no `ip %s` in\n%s", want, strings.Join(lines, "\n"))
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "default") || strings.Contains(l, "0.0.0.0/0") {
			t.Errorf("`ip %s` routes off the machine", l)
		}
	}
	// A namespace must exist before anything is put into it.
	add, veth := slices.Index(lines, "netns add mlkube-node-1"), slices.Index(lines, "link add mlkube-h1 type veth peer name mlkube-n1 netns mlkube-node-1")
	if add < 0 || veth < add {
		t.Errorf("namespace created at %d, its veth at %d", add, veth)
	}
}

func TestComponentArgv(t *testing.T) {
	host := component{Name: "etcd", Bin: "/usr/bin/etcd", Args: []string{"--a"}}
	node := component{Name: "kubelet-n", Netns: "n", Bin: "/bin/kubelet", Args: []string{"--b"}}
	if got := strings.Join(host.argv(), " "); got != "/usr/bin/etcd --a" {
		t.Errorf("host argv = %q", got)
	}
	// nsenter --net, not `ip netns exec`, which would remount /sys and hide the cgroups.
	if got := strings.Join(node.argv(), " "); got != "nsenter --net=/var/run/netns/n -- /bin/kubelet --b" {
		t.Errorf("node argv = %q", got)
	}
}
