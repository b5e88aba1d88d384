package main

import (
	"testing"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/images"
)

// TestImageRef: the image the controller renders for python3.11 is the one `make images` builds.
func TestImageRef(t *testing.T) {
	if img, err := wire.CodeRuntimeImage("python3.11"); err != nil || img != images.RuntimePython311.Ref {
		t.Errorf("wire.CodeRuntimeImage(python3.11) = %q, %v; images.RuntimePython311.Ref = %q",
			img, err, images.RuntimePython311.Ref)
	}
}
