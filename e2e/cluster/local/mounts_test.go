package local

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMountInfoLine(t *testing.T) {
	for line, want := range map[string]mount{
		"36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw": {Point: "/mnt/with space", FSType: "ext3"},
		"25 24 0:22 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu":  {Point: "/sys/fs/cgroup/cpu", FSType: "cgroup"},
		"30 25 0:26 / /run/x rw - tmpfs tmpfs rw":                                      {Point: "/run/x", FSType: "tmpfs"},
	} {
		got, ok := parseMountInfoLine(line)
		if !ok || got != want {
			t.Errorf("parse %q = %+v, %v; want %+v", line, got, ok, want)
		}
	}
	if _, ok := parseMountInfoLine("garbage"); ok {
		t.Error("garbage parsed")
	}
}

func TestMountsUnder(t *testing.T) {
	mounts := []mount{
		{Point: "/state/nodes/n1/kubelet"},
		{Point: "/state/nodes/n1/kubelet/pods/x/volumes/token"},
		{Point: "/state-other"},
		{Point: "/run/mlkube/n1/containerd/sandboxes/y/shm"},
		{Point: "/"},
	}
	want := []string{"/state/nodes/n1/kubelet/pods/x/volumes/token", "/run/mlkube/n1/containerd/sandboxes/y/shm", "/state/nodes/n1/kubelet"}
	if diff := cmp.Diff(want, mountsUnder(mounts, "/state", "/run/mlkube")); diff != "" {
		t.Errorf("deepest first, only below the dirs (-want +got):\n%s", diff)
	}
}
