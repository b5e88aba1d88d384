package main

import (
	"testing"

	"github.com/mlkube/mlkube/e2e/images"
	"github.com/mlkube/mlkube/runtimes/ioshim"
)

// TestImageRef: the image the controller injects is the one `make images` builds.
func TestImageRef(t *testing.T) {
	if images.IOShim.Ref != ioshim.Image {
		t.Errorf("images.IOShim.Ref = %q, ioshim.Image = %q", images.IOShim.Ref, ioshim.Image)
	}
}
