package suite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// slowMD5 answers an object's md5 (hex) after a pause, so that a run lasts long enough to be
// suspended, and refuses a poisoned object.
const slowMD5 = `import hashlib, time

def transform(data):
    if data.startswith(b"poison"):
        raise ValueError("poisoned object")
    time.sleep(0.5)
    return hashlib.md5(data).hexdigest().encode()
`

// TestTransformRunWithThePluginAlone: a TransformRun started, followed, suspended, resumed, its
// failed objects gathered from every node and the run deleted, with kubectl etl alone, by Ruth,
// who has nothing but edit in a namespace onboarded as docs/install.md has the admin do it.
func TestTransformRunWithThePluginAlone(t *testing.T) {
	ns := onboard(t, "ruth")
	s := newShell(t).as("ruth")
	const count = 80
	poisoned := map[string]bool{"obj-007.txt": true, "obj-042.txt": true}
	for i := range count {
		name := fmt.Sprintf("obj-%03d.txt", i)
		content := "object " + name
		if poisoned[name] {
			content = "poison " + name
		}
		s.file("data/"+name, content)
	}
	s.file("slow.py", slowMD5)
	s.do(ns, "etl init code --name slow --runtime python3.11 --from-file slow.py", "transform.etl.mlkube.io/slow created")
	s.do(ns, "wait --for=jsonpath={.status.stage}=Running transforms.etl.mlkube.io/slow --timeout=5m", "condition met")
	s.do(ns, "etl cp ./data etl:raw/")

	// A check transforms every object and keeps no result: it finds the two poisoned objects
	// and leaves nothing in its destination but the error manifests.
	code, out, errOut := s.exec("etl", "run", "slow", "--src", "raw", "--dst", "checked", "--run-name", "c1", "--check", "--wait", "--timeout", "5m", "-n", ns)
	if want := fmt.Sprintf("Failed %d/%d objects, 2 failed", count-2, count); code != 1 || !strings.Contains(out, want) {
		t.Fatalf("$ kubectl etl run slow --check --wait: exit %d, want 1 and %q\n--- stdout:\n%s--- stderr:\n%s", code, want, out, errOut)
	}
	if got := failedObjects(t, s, ns, "c1"); len(got) != len(poisoned) || !got["obj-007.txt"] || !got["obj-042.txt"] {
		t.Errorf("the check lists %v as failed, want exactly the poisoned obj-007.txt and obj-042.txt", got)
	}
	if listing := s.do(ns, "etl ls etl:checked/"); strings.Contains(listing, "obj-") || !strings.Contains(listing, "mlkube-errors-") {
		t.Errorf("after a check, its destination holds:\n%s\nwant the error manifests alone", listing)
	}

	s.do(ns, "etl run slow --src raw --dst out --run-name r1 --continue-on-error --workers-per-node 1", "transformrun.etl.mlkube.io/r1 created")
	s.do(ns, "etl runs wait r1 --for Running --timeout 3m", "transformrun.etl.mlkube.io/r1 Running")
	s.do(ns, "etl runs suspend r1", "transformrun.etl.mlkube.io/r1 suspended")
	s.do(ns, "etl runs wait r1 --for Suspended --timeout 3m", "transformrun.etl.mlkube.io/r1 Suspended")
	s.do(ns, "etl runs list", regexp.MustCompile(`(?m)^r1\s+slow\s+Suspended\s`))
	s.do(ns, "etl runs describe r1", regexp.MustCompile(`(?m)^Phase:\s+Suspended$`), regexp.MustCompile(`(?m)^Nodes:$`))
	s.do(ns, "etl runs resume r1", "transformrun.etl.mlkube.io/r1 resumed")

	// Two poisoned objects: the run ends Failed (exit 1) with every other object done.
	code, out, errOut = s.exec("etl", "runs", "follow", "r1", "--timeout", "5m", "-n", ns)
	wantLast := fmt.Sprintf("Failed %d/%d objects, 2 failed", count-2, count)
	if code != 1 || !strings.Contains(out, wantLast) || !strings.Contains(errOut, "every failed object: kubectl etl runs errors r1") {
		t.Fatalf("$ kubectl etl runs follow r1: exit %d, want 1 and %q\n--- stdout:\n%s--- stderr:\n%s", code, wantLast, out, errOut)
	}

	if got := failedObjects(t, s, ns, "r1"); len(got) != len(poisoned) || !got["obj-007.txt"] || !got["obj-042.txt"] {
		t.Errorf("kubectl etl runs errors r1 lists %v, want exactly the poisoned obj-007.txt and obj-042.txt", got)
	}

	s.do(ns, "etl runs delete r1", `transformrun.etl.mlkube.io "r1" deleted`)
	s.refused([]string{"etl", "runs", "get", "r1", "-n", ns}, "", `"r1" not found`)
}

// failedObjects are the base names kubectl etl runs errors RUN -o json lists, gathered from
// every node, each counted once.
func failedObjects(t *testing.T, s *shell, ns, run string) map[string]bool {
	t.Helper()
	var errs []v1alpha1.ObjectError
	if err := json.Unmarshal([]byte(s.do(ns, "etl runs errors "+run+" -o json")), &errs); err != nil {
		t.Fatalf("kubectl etl runs errors %s -o json: %v", run, err)
	}
	failed := map[string]bool{}
	for _, e := range errs {
		if failed[filepath.Base(e.Object)] {
			t.Errorf("kubectl etl runs errors %s lists %s twice", run, e.Object)
		}
		failed[filepath.Base(e.Object)] = true
	}
	return failed
}
