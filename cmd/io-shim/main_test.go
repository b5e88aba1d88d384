package main

import (
	"testing"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/images"
)

// TestImageRef: the image the controller injects is the one `make images` builds.
func TestImageRef(t *testing.T) {
	if images.IOShim.Ref != wire.IOShimImage {
		t.Errorf("images.IOShim.Ref = %q, wire.IOShimImage = %q", images.IOShim.Ref, wire.IOShimImage)
	}
}
