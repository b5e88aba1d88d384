package wire

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// The webhook admits the runtimes of v1alpha1.CodeRuntimes; each must have an image, and no image
// may exist for a runtime the webhook refuses.
func TestCodeRuntimesHaveImages(t *testing.T) {
	if diff := cmp.Diff(slices.Sorted(slices.Values(v1alpha1.CodeRuntimes)), CodeRuntimeNames()); diff != "" {
		t.Errorf("v1alpha1.CodeRuntimes and the runtime images differ (-admitted +images):\n%s", diff)
	}
	if img, err := CodeRuntimeImage("python3.11"); err != nil || img != "mlkube/runtime-python3.11:dev" {
		t.Errorf("CodeRuntimeImage(python3.11) = %q, %v", img, err)
	}
	if img, err := CodeRuntimeImage("python3.13"); err == nil {
		t.Errorf("CodeRuntimeImage(python3.13) = %q, want an error naming the supported runtimes", img)
	}
}

func TestIOShimCommands(t *testing.T) {
	if diff := cmp.Diff([]string{"/io-shim", "install", "/mlkube/bin/io-shim"}, IOShimInstallCommand()); diff != "" {
		t.Errorf("IOShimInstallCommand (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/mlkube/bin/io-shim", "--", "tr", "a", "b"}, IOShimCommand("tr", "a", "b")); diff != "" {
		t.Errorf("IOShimCommand (-want +got):\n%s", diff)
	}
}
