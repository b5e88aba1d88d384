package v1alpha1

import (
	"strings"
	"testing"
)

// The webhook bounds Transform names by MaxNameLength; that only holds pod names to 63
// characters while NodeHash is NodeHashLength long, whatever the node's name.
func TestTransformerPodNameFitsALabel(t *testing.T) {
	name := strings.Repeat("t", MaxNameLength)
	for _, node := range []string{"", "node-1", strings.Repeat("n", 253)} {
		if h := NodeHash(node); len(h) != NodeHashLength {
			t.Errorf("NodeHash(%q) = %q, want %d characters", node, h, NodeHashLength)
		}
		if pod := TransformerPodName(name, node); len(pod) != 63 {
			t.Errorf("TransformerPodName of a %d-character name = %d characters, want 63", len(name), len(pod))
		}
	}
}
