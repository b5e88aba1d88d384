package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTarballsToLoad(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)

	if got, err := tarballsToLoad([]string{"a.tar"}); err != nil || !cmp.Equal(got, []string{"a.tar"}) {
		t.Errorf("explicit tarballs = %v, %v", got, err)
	}
	if got, err := tarballsToLoad(nil); err == nil {
		t.Errorf("no tarballs built yet: got %v, want an error saying how to build them", got)
	}
	dir := filepath.Join(root, "_output", "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"b.tar", "a.tar", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")}
	if got, err := tarballsToLoad(nil); err != nil || !cmp.Equal(got, want) {
		t.Errorf("built tarballs = %v, %v; want %v", got, err, want)
	}
}

func TestKueueAtUp(t *testing.T) {
	for v, want := range map[string]bool{"": true, "1": true, "0": false, "later": false} {
		if got, err := kueueAtUp(v); err != nil || got != want {
			t.Errorf("MLKUBE_E2E_KUEUE=%q: %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := kueueAtUp("yes"); err == nil || !strings.Contains(err.Error(), "MLKUBE_E2E_KUEUE") {
		t.Errorf("MLKUBE_E2E_KUEUE=yes: %v; want an error naming the variable", err)
	}
}
