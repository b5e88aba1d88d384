package local

import "testing"

// TestShimSocket: the name containerd 1.6 gave a real shim of this cluster (seen in
// /run/containerd/s while it ran).
func TestShimSocket(t *testing.T) {
	got := shimSocket("/run/mlkube/mlkube-node-1/containerd.sock", "k8s.io",
		"4f659510b38924c8a0b6b78647ac2722ce21c4297d5cf4859b4a6a71f7b4d12c")
	want := "/run/containerd/s/bbcf61bf1d44371e34d0332f25a41131e77581f3422fb3069f32cd4cddd6cb75"
	if got != want {
		t.Errorf("shimSocket = %s, want %s", got, want)
	}
}
