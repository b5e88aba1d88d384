package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/plugin/etl/aisspec"
)

// TestAIStoreSpecsAsEditor: each of AIStore's published ETL specs
// (plugin/etl/aisspec/testdata/README.md) is accepted by `kubectl etl init -f FILE
// --dry-run=server` as a namespace editor of a namespace enforcing the restricted Pod Security
// Standard: the webhook's checks (Pod Security of the pod the controller builds, reserved names,
// fqn's driver) pass on every conversion, and the report is exactly the conversion's.
func TestAIStoreSpecsAsEditor(t *testing.T) {
	admin := newShell(t)
	ns := onboard(t, "dave")
	dave := admin.as("dave")
	var files []string
	err := filepath.WalkDir("../../plugin/etl/aisspec/testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) < 5 {
		t.Fatalf("the corpus: %d files, %v", len(files), err)
	}
	for i, file := range files {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		conv, err := aisspec.Convert(doc, "", ns)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		name := conv.Transform.Name
		local := fmt.Sprintf("spec-%d.yaml", i)
		dave.file(local, string(doc))
		code, stdout, stderr := dave.exec("etl", "init", "-f", local, "-n", ns, "--dry-run=server")
		wantOut := fmt.Sprintf("transform.etl.mlkube.io/%s created (server dry run)\n", name)
		wantErr := fmt.Sprintf("converted %s %q:\n  %s\n", conv.From, name, strings.Join(conv.Changes, "\n  "))
		if code != 0 || stdout != wantOut || stderr != wantErr {
			t.Errorf("$ kubectl etl init -f %s (%s) -n %s --dry-run=server\nexit %d (want 0)\n--- stdout:\n%s--- want:\n%s--- stderr:\n%s--- want:\n%s",
				local, file, ns, code, stdout, wantOut, stderr, wantErr)
		}
	}
}
