package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPrepareDataRoot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "node-a")
	// A non-root test can only give the directory to itself.
	for range 2 {
		if err := prepareDataRoot(dir, os.Getuid(), os.Getgid()); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o750 {
			t.Errorf("mode %v, want 0750", fi.Mode().Perm())
		}
	}
	if os.Getuid() != 0 {
		if err := prepareDataRoot(dir, 0, 0); err == nil {
			t.Error("a non-root process gave a directory to root")
		}
	}
}

func TestObjectFlags(t *testing.T) {
	srv, opts, err := parseFlags([]string{"--min-free-bytes=5", "--namespace-quota=7", "--peer-service-account=x", "--prepare-data-root"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if opts.MinFreeBytes != 5 || opts.NamespaceQuota != 7 || opts.PeerServiceAccount != "x" || !srv.prepare || srv.uid != 65532 {
		t.Errorf("flags not taken: %+v %+v", srv, opts)
	}
}
