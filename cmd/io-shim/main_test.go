package main

import (
	"testing"

	"github.com/mlkube/mlkube/controller/ioshim"
	"github.com/mlkube/mlkube/e2e/images"
)

// TestImageRef: the image the controller injects is the one `make images` builds.
func TestImageRef(t *testing.T) {
	if images.IOShim.Ref != ioshim.Image {
		t.Errorf("images.IOShim.Ref = %q, ioshim.Image = %q", images.IOShim.Ref, ioshim.Image)
	}
}
