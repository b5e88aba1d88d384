package repo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestRootFromASubdirectory(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	got, err := Root()
	if err != nil || got != root {
		t.Errorf("Root() = %q, %v; want %q", got, err, root)
	}
	out, err := Output("cluster")
	if want := filepath.Join(root, "_output", "cluster"); err != nil || out != want {
		t.Errorf("Output() = %q, %v; want %q", out, err, want)
	}
}

func TestRootWithoutGoMod(t *testing.T) {
	t.Chdir(t.TempDir())
	if got, err := Root(); err == nil {
		t.Errorf("Root() = %q, want an error outside any module", got)
	}
}

func TestScriptReturnsLastLine(t *testing.T) {
	root := t.TempDir()
	script := "#!/bin/sh\necho building >&2\necho first\necho \"$GREETING/$1\"\n"
	if err := os.WriteFile(filepath.Join(root, "s.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Script(context.Background(), root, "s.sh", []string{"x"}, "GREETING=/cache/bin")
	if err != nil || got != "/cache/bin/x" {
		t.Errorf("Script = %q, %v; want the last line", got, err)
	}
	if _, err := Script(context.Background(), root, "missing.sh", nil); err == nil {
		t.Error("Script of a missing program: want an error")
	}
}
