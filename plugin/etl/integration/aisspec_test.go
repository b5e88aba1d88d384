package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/etl"
	"github.com/mlkube/mlkube/plugin/etl/aisspec"
)

// aisCorpus lists AIStore's published specs (plugin/etl/aisspec/testdata/README.md).
func aisCorpus(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("../aisspec/testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) < 5 {
		t.Fatalf("corpus: %d files, %v", len(files), err)
	}
	return files
}

// TestAIStoreSpecsServerDryRun: each of AIStore's published specs is accepted by the API server
// through `init -f FILE --dry-run=server`, printing its conversion report, and nothing is stored;
// all of them in one stream on stdin too.
func TestAIStoreSpecsServerDryRun(t *testing.T) {
	ctx := context.Background()
	const ns = "aistore"
	server.CreateNamespace(t, ns)
	var all, allOut, allErr strings.Builder
	for _, file := range aisCorpus(t) {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		conv, err := aisspec.Convert(doc, "", ns)
		if err != nil {
			t.Fatal(err)
		}
		name := conv.Transform.Name
		wantOut := fmt.Sprintf("transform.etl.mlkube.io/%s created (server dry run)\n", name)
		wantErr := fmt.Sprintf("converted %s %q:\n  %s\n", conv.From, name, strings.Join(conv.Changes, "\n  "))
		out, errOut, code := server.Run(t, etl.NewRoot, t.TempDir(), "", "init", "-f", file, "--dry-run=server", "-n", ns)
		if out != wantOut || errOut != wantErr || code != 0 {
			t.Errorf("init -f %s --dry-run=server: exit %d\nstdout: %q\nwant:   %q\nstderr: %q\nwant:   %q", file, code, out, wantOut, errOut, wantErr)
		}
		err = k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v1alpha1.Transform{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s: Get after a server dry run = %v, want not found", name, err)
		}
		all.WriteString("---\n" + string(doc) + "\n")
		allOut.WriteString(wantOut)
		allErr.WriteString(wantErr)
	}
	out, errOut, code := server.Run(t, etl.NewRoot, t.TempDir(), all.String(), "init", "-f", "-", "--dry-run=server", "-n", ns)
	if out != allOut.String() || errOut != allErr.String() || code != 0 {
		t.Errorf("init -f - with the whole corpus: exit %d\nstdout: %q\nwant:   %q\nstderr: %q\nwant:   %q", code, out, allOut.String(), errOut, allErr.String())
	}
}
