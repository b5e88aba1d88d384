package python

import (
	"testing"
)

func TestImageFor(t *testing.T) {
	if img, err := ImageFor("python3.11"); err != nil || img != "mlkube/runtime-python3.11:dev" {
		t.Errorf("ImageFor(python3.11) = %q, %v", img, err)
	}
	if img, err := ImageFor("python3.13"); err == nil {
		t.Errorf("ImageFor(python3.13) = %q, want an error", img)
	} else if want := `code runtime "python3.13" is not supported (supported: python3.11)`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
