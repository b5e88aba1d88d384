package etl

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeTree writes 50 files in nested directories under a new directory, one of them empty and
// one with a space in its name, and returns the directory and the files by slash path.
func writeTree(t *testing.T) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"empty": "", "with space.txt": "spaced"}
	for i := range 48 {
		files[fmt.Sprintf("d%d/sub%d/f%02d.bin", i%3, i%2, i)] = strings.Repeat(fmt.Sprintf("%d:", i), i*37)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files
}

// readTree reads every file under dir by slash path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (a *fakeAgent) under(prefix string) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	got := map[string]string{}
	for name, b := range a.objects {
		if rel, ok := strings.CutPrefix(name, prefix); ok {
			got[rel] = string(b)
		}
	}
	return got
}

func (a *fakeAgent) counts() (puts, gets int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	puts, gets = a.puts, a.gets
	a.puts, a.gets = 0, 0
	return puts, gets
}

func mustRun(t *testing.T, url, stdin string, args ...string) string {
	t.Helper()
	env, code, _ := runObjects(t, url, stdin, args...)
	if code != 0 {
		t.Fatalf("kubectl etl %s: exit %d: %s", strings.Join(args, " "), code, env.Stderr)
	}
	return env.Stdout.String()
}

func TestCpTreeUpAndDown(t *testing.T) {
	agent, url := newFakeAgent(t)
	agent.pageSize = 7
	src, files := writeTree(t)
	mustRun(t, url, "", "cp", src, "etl:raw/", "-q", "--parallel", "4")
	if diff := cmp.Diff(files, agent.under("raw/")); diff != "" {
		t.Errorf("objects under raw/ (-want +got):\n%s", diff)
	}
	if agent.max > 4 {
		t.Errorf("%d requests at once with --parallel 4", agent.max)
	}
	dst := filepath.Join(t.TempDir(), "out")
	mustRun(t, url, "", "cp", "etl:raw/", dst, "-q")
	if diff := cmp.Diff(files, readTree(t, dst)); diff != "" {
		t.Errorf("downloaded tree (-want +got):\n%s", diff)
	}
}

func TestCpStdinStdout(t *testing.T) {
	agent, url := newFakeAgent(t)
	mustRun(t, url, "from stdin\n", "cp", "-", "etl:in/x.txt", "-q")
	if got := agent.under("in/"); got["x.txt"] != "from stdin\n" {
		t.Errorf("objects: %q", got)
	}
	if got := mustRun(t, url, "", "cp", "etl:in/x.txt", "-"); got != "from stdin\n" {
		t.Errorf("stdout %q", got)
	}
}

func TestCpOneFileIntoADirectory(t *testing.T) {
	agent, url := newFakeAgent(t)
	agent.objects["raw/a.txt"] = []byte("a")
	dir := t.TempDir()
	env, code, _ := runObjects(t, url, "", "cp", "etl:raw/a.txt", dir)
	if code != 0 || env.Stderr.String() != "downloaded raw/a.txt\ndownloaded 1 of 1 objects\n" {
		t.Errorf("exit %d, stderr %q", code, env.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a.txt")); err != nil || string(b) != "a" {
		t.Errorf("a.txt: %q, %v", b, err)
	}
	// A directory that does not exist yet, named as one.
	newDir := filepath.Join(dir, "new") + string(filepath.Separator)
	mustRun(t, url, "", "cp", "etl:raw/a.txt", newDir, "-q")
	if b, err := os.ReadFile(filepath.Join(newDir, "a.txt")); err != nil || string(b) != "a" {
		t.Errorf("new/a.txt: %q, %v", b, err)
	}
}

func TestCpSkipExisting(t *testing.T) {
	agent, url := newFakeAgent(t)
	src, files := writeTree(t)
	mustRun(t, url, "", "cp", src, "etl:raw/", "-q")
	agent.counts()
	if err := os.WriteFile(filepath.Join(src, "d0", "sub0", "f00.bin"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, code, _ := runObjects(t, url, "", "cp", src, "etl:raw/", "--skip-existing")
	if puts, _ := agent.counts(); code != 0 || puts != 1 || agent.under("raw/")["d0/sub0/f00.bin"] != "changed" {
		t.Errorf("exit %d, %d PUTs, want the changed file alone", code, puts)
	}
	lines := strings.Split(strings.TrimSpace(env.Stderr.String()), "\n")
	if want := "uploaded 1 of 50 objects, skipped 49"; lines[len(lines)-1] != want || !strings.Contains(env.Stderr.String(), "uploaded raw/d0/sub0/f00.bin\n") {
		t.Errorf("stderr %q, want it to end with %q", env.Stderr, want)
	}

	dst := t.TempDir()
	mustRun(t, url, "", "cp", "etl:raw/", dst, "-q")
	agent.counts()
	if err := os.WriteFile(filepath.Join(dst, "empty"), []byte("not empty"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, url, "", "cp", "etl:raw/", dst, "-q", "--skip-existing")
	if _, gets := agent.counts(); gets != 1 {
		t.Errorf("%d GETs, want the changed file alone", gets)
	}
	files["d0/sub0/f00.bin"] = "changed"
	if diff := cmp.Diff(files, readTree(t, dst)); diff != "" {
		t.Errorf("downloaded tree (-want +got):\n%s", diff)
	}
}

func TestCpResumes(t *testing.T) {
	agent, url := newFakeAgent(t)
	agent.failAfter = 20
	src, files := writeTree(t)
	env, code, _ := runObjects(t, url, "", "cp", src, "etl:raw/", "-q", "--parallel", "1")
	if code != 1 || !strings.Contains(env.Stderr.String(), "(507: disk full)") ||
		!strings.HasSuffix(env.Stderr.String(), "uploaded 20 of 50 objects; run the same cp with --skip-existing to copy the rest\n") {
		t.Errorf("exit %d, stderr %q", code, env.Stderr)
	}
	agent.failAfter = 0
	agent.counts()
	mustRun(t, url, "", "cp", src, "etl:raw/", "-q", "--skip-existing")
	if puts, _ := agent.counts(); puts != 30 {
		t.Errorf("%d PUTs after the resume, want the 30 missing", puts)
	}
	if diff := cmp.Diff(files, agent.under("raw/")); diff != "" {
		t.Errorf("objects under raw/ (-want +got):\n%s", diff)
	}
}

func TestCpLeavesNoPartialFile(t *testing.T) {
	agent, url := newFakeAgent(t)
	agent.objects["raw/bad"] = []byte("payload")
	agent.corrupt = "raw/bad"
	dir := t.TempDir()
	env, code, _ := runObjects(t, url, "", "cp", "etl:raw/bad", filepath.Join(dir, "bad"), "-q")
	if code != 1 || !strings.Contains(env.Stderr.String(), "not the") {
		t.Errorf("exit %d, stderr %q", code, env.Stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestCpUsage(t *testing.T) {
	_, url := newFakeAgent(t)
	for args, want := range map[string]string{
		"cp a b":                              "error: one of SRC and DST must be objects, written etl:NAME, and the other local; see 'kubectl etl cp --help'\n",
		"cp a etl:x --parallel 0":             "error: --parallel must be between 1 and 256; see 'kubectl etl cp --help'\n",
		"cp a etl:x --parallel 257":           "error: --parallel must be between 1 and 256; see 'kubectl etl cp --help'\n",
		"cp - etl:raw/":                       "error: stdin is one object: name it, as in etl:raw/NAME; see 'kubectl etl cp --help'\n",
		"cp etl:raw/ -":                       "error: stdout takes one object: name it, as in etl:raw/NAME; see 'kubectl etl cp --help'\n",
		"cp etl:none/ .":                      "error: no objects under \"none/\" in namespace default; see kubectl etl ls\n",
		"cp etl:missing -":                    "error: no object missing in namespace default (404); see kubectl etl ls\n",
		"cp - etl:x --service-account viewer": "error: x: ServiceAccount default:viewer may not create objects in namespace default (403: viewer may not PUT); bind it to mlkube-datapath-user: kubectl -n default create rolebinding viewer-datapath-create --clusterrole=mlkube-datapath-user --serviceaccount=default:viewer (docs/datapath-rbac.md), or pass --service-account; uploaded 0 of 1 objects; run the same cp with --skip-existing to copy the rest\n",
	} {
		t.Run(args, func(t *testing.T) {
			env, code, _ := runObjects(t, url, "", strings.Fields(args)...)
			if diff := cmp.Diff(want, env.Stderr.String()); code != 1 || diff != "" {
				t.Errorf("exit %d, stderr (-want +got):\n%s", code, diff)
			}
		})
	}
}
