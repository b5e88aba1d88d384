package durable

import (
	"errors"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/internal/status"
)

func TestTempNames(t *testing.T) {
	cases := map[string]struct{ final, tag, want string }{
		"nested":    {"out/x/y.jpg", "u1", "out/x/.y.jpg.u1.tmp"},
		"top level": {"y", "u1", ".y.u1.tmp"},
		"put":       {"a/b", "put-00ff", "a/.b.put-00ff.tmp"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := TempName(tc.final, tc.tag)
			if got != tc.want {
				t.Errorf("TempName(%q) = %q, want %q", tc.final, got, tc.want)
			}
			if base := path.Base(got); !IsTempOf(base, tc.tag) || IsTempOf(base, "u2") {
				t.Errorf("IsTempOf(%q) does not recognize it as %s's only", base, tc.tag)
			}
		})
	}
	if IsTempOf("y.u1.tmp", "u1") {
		t.Error("a name that is not hidden is a result, never a temporary file")
	}
	if !IsTempOf(".b.put-00ff.tmp", "put-") || IsTempOf(".b.u1.tmp", "put-") || IsTempOf(".b.u1-put-1.tmp", "put-") {
		t.Error(`the tag "put-" must match every put temporary and nothing else`)
	}
}

// tempRoot opens a new temporary directory as a root, closed with the test.
func tempRoot(t *testing.T) (*os.Root, string) {
	t.Helper()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root, dir
}

func TestCreateFailureLeavesNothing(t *testing.T) {
	root, dir := tempRoot(t)
	gone := errors.New("client gone")
	err := Create(root, "a/b", TempName("a/b", "put-1"), failingReader{gone}, make([]byte, 16), Hooks{})
	if !errors.Is(err, gone) {
		t.Fatalf("Create = %v, want the reader's error", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "a"))
	if len(entries) != 0 {
		t.Errorf("left %v behind", entries)
	}
	if err := Create(root, "a/b", TempName("a/b", "put-1"), strings.NewReader("x"), make([]byte, 16), Hooks{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", ".c.put-2.tmp"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SweepTemps(root, ".", "put-"); err != nil {
		t.Fatal(err)
	}
	entries, _ = os.ReadDir(filepath.Join(dir, "a"))
	if len(entries) != 1 || entries[0].Name() != "b" {
		t.Errorf("after the sweep: %v, want only b", entries)
	}
}

// TestCreateRenameHook: the Rename hook makes the rename, and its error
// fails the Create with nothing left, its status kept.
func TestCreateRenameHook(t *testing.T) {
	root, dir := tempRoot(t)
	full := status.With(http.StatusInsufficientStorage, errors.New("no room"))
	refuse := Hooks{Rename: func(func() error) error { return full }}
	if err := Create(root, "a", TempName("a", "put-1"), strings.NewReader("x"), make([]byte, 16), refuse); status.Of(err) != http.StatusInsufficientStorage {
		t.Errorf("Create with a refusing Rename = %v, want its 507", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused rename left %v", entries)
	}
	renamed := false
	wrap := Hooks{Rename: func(rename func() error) error {
		err := rename()
		_, statErr := root.Stat("a")
		renamed = err == nil && statErr == nil
		return err
	}}
	if err := Create(root, "a", TempName("a", "put-1"), strings.NewReader("x"), make([]byte, 16), wrap); err != nil || !renamed {
		t.Errorf("Create = %v; the file was renamed within the hook: %v", err, renamed)
	}
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }
