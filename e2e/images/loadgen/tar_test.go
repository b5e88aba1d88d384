package main

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/internal/loadgen"
)

// TestTarAsKubectlCpRunsIt packs a tree as `kubectl cp pod:DIR` runs tar and unpacks it as
// `kubectl cp DIR pod:…` does: every file comes back with its bytes, under its path without the
// leading "/".
func TestTarAsKubectlCpRunsIt(t *testing.T) {
	src := filepath.Join(t.TempDir(), "files")
	for name, size := range map[string]int{"a": 0, "b/c": 5000, "b/d/e": 70 << 10} {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, loadgen.Payload(size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var archive bytes.Buffer
	if err := runTar([]string{"cf", "-", src}, nil, &archive); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := runTar([]string{"--no-same-permissions", "--no-same-owner", "-xmf", "-", "-C", dst}, bytes.NewReader(archive.Bytes()), nil); err != nil {
		t.Fatal(err)
	}
	want, err := loadgen.TreeSums(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := loadgen.TreeSums(filepath.Join(dst, strings.TrimPrefix(src, "/")))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" || len(got) != 3 {
		t.Errorf("unpacked tree (-want +got):\n%s", diff)
	}
	var printed bytes.Buffer
	if err := loadgen.FormatSums(&printed, got); err != nil {
		t.Fatal(err)
	}
	if parsed, err := loadgen.ParseSums(&printed); err != nil || !cmp.Equal(parsed, got) {
		t.Errorf("sums do not read back: %v", err)
	}
}

func TestTarStaysInItsDirectory(t *testing.T) {
	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	_ = tw.WriteHeader(&tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1})
	_, _ = tw.Write([]byte("x"))
	_ = tw.Close()
	dir := filepath.Join(t.TempDir(), "in")
	if err := runTar([]string{"-xmf", "-", "-C", dir}, &archive, nil); err == nil {
		t.Error("a name outside the directory was unpacked")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape")); err == nil {
		t.Error("the file outside was written")
	}
	if err := runTar([]string{"-tvf", "-"}, nil, nil); err == nil {
		t.Error("an unsupported mode was accepted")
	}
}
