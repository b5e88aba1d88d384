package ioshim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/runtimes/runtimetest"
)

func TestInstall(t *testing.T) {
	dir := t.TempDir()
	dst := filepath.Join(dir, "io-shim")
	// The init container's volume may hold a stale copy from a restart.
	if err := os.WriteFile(dst, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{InstallSubcommand, dst}, os.Stderr); code != 0 {
		t.Fatalf("install exited %d", code)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("installed %d bytes, want a copy of the %d-byte executable", len(got), len(want))
	}
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o755 {
		t.Errorf("mode %v, want 0755", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %v, want only io-shim (no temporary file left)", entries)
	}
}

func TestInstallIntoMissingDirectory(t *testing.T) {
	var stderr bytes.Buffer
	if code := Main([]string{InstallSubcommand, filepath.Join(t.TempDir(), "no", "io-shim")}, &stderr); code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "install") {
		t.Errorf("stderr %q does not say what failed", stderr.String())
	}
}

func TestParseFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args    []string
		want    config
		wantErr bool
	}{
		"command":          {args: []string{"--", "tr", "a-z", "A-Z"}, want: config{concurrency: 7, command: []string{"tr", "a-z", "A-Z"}}},
		"concurrency":      {args: []string{"--concurrency", "3", "--", "cat"}, want: config{concurrency: 3, command: []string{"cat"}}},
		"persistent":       {args: []string{"--persistent", "--", "md5"}, want: config{concurrency: 7, persistent: true, command: []string{"md5"}}},
		"command flags":    {args: []string{"--", "gzip", "-c", "--", "x"}, want: config{concurrency: 7, command: []string{"gzip", "-c", "--", "x"}}},
		"no separator":     {args: []string{"cat"}, wantErr: true},
		"no command":       {args: []string{"--"}, wantErr: true},
		"nothing":          {wantErr: true},
		"unknown flag":     {args: []string{"--bogus", "--", "cat"}, wantErr: true},
		"flag after start": {args: []string{"--concurrency", "2", "cat", "--", "x"}, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parseFlags(tc.args, &bytes.Buffer{})
			if tc.wantErr {
				if err == nil {
					t.Errorf("parseFlags = %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.want.concurrency == 7 {
				tc.want.concurrency = got.concurrency // the default, the CPU count
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(config{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// An object without the node agent's credential never spawns the command.
func TestMainRefusesWithoutCredential(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "spawned")
	runtimetest.MainRefusesWithoutCredential(t, func() int {
		return Main([]string{"--", "sh", "-c", `touch "$0"; cat`, marker}, os.Stderr)
	})
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command was spawned for an unauthenticated object")
	}
}
