package main

import (
	"os"
	"path/filepath"
	"syscall"
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

// As root (CI runs so), at every start of the agent's pod: a directory of another user is given
// to the agent with mode 0750; one the agent owns already keeps its mode, so a restart never
// needs CAP_FOWNER.
func TestPrepareDataRootAgain(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("giving a directory to another user takes root")
	}
	const agent = 65532
	dir := filepath.Join(t.TempDir(), "node-a")
	if err := os.Mkdir(dir, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 1234, 1234); err != nil {
		t.Fatal(err)
	}
	if err := prepareDataRoot(dir, agent, agent); err != nil {
		t.Fatal(err)
	}
	wantOwner(t, dir, agent, 0o750)
	if err := os.Chmod(dir, 0o770); err != nil {
		t.Fatal(err)
	}
	if err := prepareDataRoot(dir, agent, agent); err != nil {
		t.Fatal(err)
	}
	wantOwner(t, dir, agent, 0o770)
}

func wantOwner(t *testing.T, dir string, uid int, mode os.FileMode) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if int(st.Uid) != uid || int(st.Gid) != uid || fi.Mode().Perm() != mode {
		t.Errorf("%s: %d:%d %v, want %d:%d %v", dir, st.Uid, st.Gid, fi.Mode().Perm(), uid, uid, mode)
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
