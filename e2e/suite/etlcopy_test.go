package suite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/internal/kubetest"
)

// TestEtlCopyResumesAfterBeingKilled: `kubectl etl cp` of a tree of 1,000 files, killed
// (SIGKILL) once some but not all objects exist, completes when run again with
// --skip-existing, which rewrites none of the objects stored whole before; the tree comes
// back byte for byte. Erin runs it with nothing but edit in a namespace onboarded as
// docs/install.md has the admin do it.
func TestEtlCopyResumesAfterBeingKilled(t *testing.T) {
	ns := onboard(t, "erin")
	s := newShell(t).as("erin")
	tree := s.randomTree("tree", 1000, 64<<10, []string{"a", "a/b", "c"}, 0)
	base := forwardToAgent(t, readyNodes(t)[0])
	token := dataPathToken(t, ns, cliServiceAccount)

	cp, out := s.start("etl", "cp", "-n", ns, "./tree", "etl:tree/", "--parallel", "4")
	exited := make(chan error, 1)
	go func() { exited <- cp.Wait() }()
	fast := k8s
	fast.Interval = 50 * time.Millisecond // the objects of a few polls of the suite's 1 s would be all of them
	fast.Eventually(t, "kubectl etl cp to have stored some but not all of the tree", func(context.Context) (bool, error) {
		select {
		case err := <-exited:
			return false, kubetest.Stop(fmt.Errorf("kubectl etl cp ended before it could be killed (%w):\n%s", err, out))
		default:
		}
		list, err := listObjects(t, base, ns, "tree/", token)
		if err != nil {
			return false, err
		}
		return len(list.Items) > 0 && len(list.Items) < len(tree), nil
	})
	if err := cp.Process.Kill(); err != nil {
		t.Fatalf("killing kubectl etl cp: %v", err)
	}
	<-exited
	before, err := listObjects(t, base, ns, "tree/", token)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Items) == len(tree) {
		t.Fatalf("kubectl etl cp stored all %d objects before the kill took", len(tree))
	}
	t.Logf("killed kubectl etl cp with %d of %d objects stored", len(before.Items), len(tree))

	s.do(ns, "etl cp ./tree etl:tree/ --parallel 4 --skip-existing")
	names := strings.Fields(s.do(ns, "etl ls tree/ --recursive -o name"))
	listed := map[string][]byte{}
	for _, name := range names {
		listed[strings.TrimPrefix(name, "tree/")] = tree[strings.TrimPrefix(name, "tree/")]
	}
	if len(names) != len(tree) {
		t.Errorf("kubectl etl ls tree/ --recursive -o name lists %d names, want %d", len(names), len(tree))
	}
	sameFiles(t, "the objects kubectl etl ls lists after the resumed copy", listed, tree)

	// An object stored whole before the kill is skipped, not written again.
	after, err := listObjects(t, base, ns, "tree/", token)
	if err != nil {
		t.Fatal(err)
	}
	modified := map[string]time.Time{}
	for _, o := range after.Items {
		modified[o.Name] = o.Modified
	}
	whole, rewritten := 0, 0
	for _, o := range before.Items {
		data := tree[strings.TrimPrefix(o.Name, "tree/")]
		if o.Size != int64(len(data)) || (o.Checksum != "" && o.Checksum != sha256hex(data)) {
			continue // cut short by the kill: the resumed copy must write it again
		}
		whole++
		if !modified[o.Name].Equal(o.Modified) {
			rewritten++
		}
	}
	if whole == 0 || rewritten > 0 {
		t.Errorf("the resumed copy wrote again %d of the %d objects stored whole before the kill", rewritten, whole)
	}

	s.do(ns, "etl cp etl:tree/ ./back")
	sameFiles(t, "./back after kubectl etl cp etl:tree/ ./back", s.readTree("back"), tree)
}
