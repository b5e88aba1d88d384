package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/e2e/internal/fixture"
	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/internal/loadgen"
	"github.com/mlkube/mlkube/internal/repo"
)

// A copySet is a tree of files copied both ways by both tools.
type copySet struct {
	name        string // the row's name for MLKUBE_BENCH_ONLY, cp/<name>
	files, size int
}

func (s copySet) String() string {
	if s.files == 1 {
		return "1 × " + sizeName(s.size) + " file"
	}
	return fmt.Sprintf("%d × %s files", s.files, sizeName(s.size))
}

// copySets are the 1,000 files of 1 MiB and one file of 1 GiB, or the sizes of
// MLKUBE_BENCH_CP_FILES, MLKUBE_BENCH_CP_FILE_KIB and MLKUBE_BENCH_CP_BIG_MIB.
func copySets(t *testing.T) []copySet {
	return []copySet{
		{"files", envInt(t, "MLKUBE_BENCH_CP_FILES", 1000), envInt(t, "MLKUBE_BENCH_CP_FILE_KIB", 1024) << 10},
		{"big", 1, envInt(t, "MLKUBE_BENCH_CP_BIG_MIB", 1024) << 20},
	}
}

// copyVersion stamps the plugin the bench builds.
const copyVersion = "v0.0.0-bench"

// compareCopies copies each set into the cluster and back with `kubectl etl cp` (the namespace's
// objects, under cp/) and with `kubectl cp` (tar over exec, into a pod on node), the real kubectl
// running the plugin built from this checkout, and checks the SHA-256 of every file after each
// copy: of the objects as the agent recorded them, of the files in the pod, of the files back.
func compareCopies(t *testing.T, k8s kubetest.Client, kubeconfig, ns, node string, sets []copySet) []copyResult {
	sh := newCopyShell(t, kubeconfig, ns)
	servePod(t, k8s, ns, node, "cp", "serve")
	t.Cleanup(func() {
		if out, err := sh.output("etl", "rm", "-r", "etl:cp/"); err != nil {
			t.Logf("removing the objects of kubectl etl cp: %v\n%s", err, out)
		}
	})
	var results []copyResult
	for _, s := range sets {
		work := t.TempDir()
		src := filepath.Join(work, s.name)
		if err := writeTree(src, s); err != nil {
			t.Fatal(err)
		}
		want, err := loadgen.TreeSums(src)
		if err != nil {
			t.Fatal(err)
		}
		size := int64(s.files) * int64(s.size)
		result := func(tool string, in bool, d time.Duration) {
			results = append(results, copyResult{Set: s.String(), Tool: tool, In: in, Bytes: size, Elapsed: d})
		}
		prefix := "cp/" + s.name + "/"
		result(toolEtl, true, sh.timed("etl", "cp", "-q", src, "etl:"+prefix))
		sh.check(s, "the objects of kubectl etl cp", want, sh.objectSums(prefix))
		back := filepath.Join(work, "etl")
		result(toolEtl, false, sh.timed("etl", "cp", "-q", "etl:"+prefix, back))
		sh.check(s, "the files kubectl etl cp brought back", want, localSums(t, back))
		inPod := "/tmp/cp/" + s.name
		result(toolKubectl, true, sh.timed("cp", src, "cp:"+inPod))
		sh.check(s, "the files kubectl cp put in the pod", want, sh.podSums(inPod))
		back = filepath.Join(work, "kubectl")
		result(toolKubectl, false, sh.timed("cp", "cp:"+inPod, back))
		sh.check(s, "the files kubectl cp brought back", want, localSums(t, back))
		// The next set's disk: a 1 GiB set is on this machine three times over by now.
		if err := os.RemoveAll(work); err != nil {
			t.Fatal(err)
		}
	}
	return results
}

// copyShell runs the real kubectl, the plugin built from this checkout first on PATH, in the
// bench's namespace.
type copyShell struct {
	t       *testing.T
	kubectl string
	ns      string
	env     []string
}

func newCopyShell(t *testing.T, kubeconfig, ns string) *copyShell {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := fixture.BuildPlugins(root, bin, copyVersion); err != nil {
		t.Fatal(err)
	}
	kubectl, err := fixture.Kubectl(root)
	if err != nil {
		t.Fatal(err)
	}
	sh := &copyShell{t: t, kubectl: kubectl, ns: ns, env: append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+kubeconfig,
		"KUBECACHEDIR="+t.TempDir(),
	)}
	if out := sh.run("etl", "version", "--client"); !strings.Contains(out, copyVersion) {
		t.Fatalf("kubectl etl is not the plugin built here: %s", out)
	}
	return sh
}

// run runs kubectl args -n NS, which must succeed, and returns its standard output.
func (s *copyShell) run(args ...string) string {
	s.t.Helper()
	out, err := s.output(args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// output runs kubectl args -n NS and returns its standard output, or an error that shows both
// outputs.
func (s *copyShell) output(args ...string) (string, error) {
	// -n goes after the command's name: kubectl refuses flags before a plugin's name.
	cmd := exec.Command(s.kubectl, slices.Concat(args[:1], []string{"-n", s.ns}, args[1:])...)
	cmd.Env = s.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("$ kubectl %s: %w\n%.4000s%.4000s", strings.Join(cmd.Args[1:], " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// timed runs kubectl args and returns how long it took, kubectl's start included: what a user waits.
func (s *copyShell) timed(args ...string) time.Duration {
	s.t.Helper()
	start := time.Now()
	s.run(args...)
	return time.Since(start)
}

// objectSums are the SHA-256 the agents recorded of the objects under prefix, by name relative to it.
func (s *copyShell) objectSums(prefix string) map[string]string {
	s.t.Helper()
	var list wire.ObjectList
	if err := json.Unmarshal([]byte(s.run("etl", "ls", prefix, "--recursive", "-o", "json")), &list); err != nil {
		s.t.Fatalf("kubectl etl ls -o json: %v", err)
	}
	sums := map[string]string{}
	for _, o := range list.Items {
		sums[strings.TrimPrefix(o.Name, prefix)] = o.Checksum
	}
	return sums
}

// podSums are the SHA-256 of the files under dir in the pod cp.
func (s *copyShell) podSums(dir string) map[string]string {
	s.t.Helper()
	sums, err := loadgen.ParseSums(strings.NewReader(s.run("exec", "cp", "--", "/loadgen", "sums", dir)))
	if err != nil {
		s.t.Fatal(err)
	}
	return sums
}

// check fails the test when got is not want, naming the set and the copy.
func (s *copyShell) check(set copySet, what string, want, got map[string]string) {
	s.t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		s.t.Fatalf("%s: %s differ from the source (-want +got):\n%.4000s", set, what, diff)
	}
}

func localSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums, err := loadgen.TreeSums(dir)
	if err != nil {
		t.Fatal(err)
	}
	return sums
}

// writeTree writes the set's files under dir, each of its own pseudo-random bytes (a copy that
// swaps two files fails its check), in directories of 100 files as a dataset's shards are.
func writeTree(dir string, s copySet) error {
	for i := range s.files {
		name := filepath.Join(dir, fmt.Sprintf("%03d", i/100), fmt.Sprintf("%05d.bin", i))
		if s.files == 1 {
			name = filepath.Join(dir, "big.bin")
		}
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		_, err = io.CopyN(f, rand.NewChaCha8([32]byte{byte(i), byte(i >> 8), byte(i >> 16), 0xcb}), int64(s.size))
		if err := errors.Join(err, f.Close()); err != nil {
			return err
		}
	}
	return nil
}
