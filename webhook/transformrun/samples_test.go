package transformrun

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// TestSamplesAreAdmitted: the samples users copy pass the webhook as they are.
func TestSamplesAreAdmitted(t *testing.T) {
	files, err := filepath.Glob("../../manifests/samples/transformrun-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no TransformRun samples found: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r v1alpha1.TransformRun
		if err := yaml.UnmarshalStrict(raw, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if errs := ValidateCreate(&r); len(errs) != 0 {
			t.Errorf("%s is refused: %v", f, errs)
		}
	}
}
