package integration

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/plugin/internal/cli"
)

const jobs = `apiVersion: mxnet.mlkube.io/v1beta1
kind: MxJob
metadata: {name: a}
spec:
  jobMode: local
  replicaSpecs:
  - mxReplicaType: WORKER
    template: {spec: {containers: [{name: mxnet, image: mxnet:1.9}]}}
---
apiVersion: kubeflow.org/v1
kind: MXJob
metadata: {name: b}
spec:
  mxReplicaSpecs:
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: mxnet, image: mxnet:1.9}]}}
---
apiVersion: mxnet.mlkube.io/v1beta1
kind: MxJob
metadata: {name: c}
spec:
  jobMode: local
  replicaSpecs:
  - mxReplicaType: WORKER
    template: {spec: {containers: [{name: mxnet, image: mxnet:1.9}]}}
`

// TestCreateListGetDelete: the commands a user types first, against the real API server.
func TestCreateListGetDelete(t *testing.T) {
	ns := "crud"
	server.CreateNamespace(t, ns)
	cache := t.TempDir()
	steps := []struct {
		args     []string
		stdin    string
		wantOut  string
		wantCode int
	}{
		{args: []string{"create", "-n", ns, "-f", "-"}, stdin: jobs,
			wantOut: "mxjob.mxnet.mlkube.io/a created\nmxjob.mxnet.mlkube.io/b created\nmxjob.mxnet.mlkube.io/c created\n"},
		// Pages of two: the list is read in two requests and printed as one table.
		{args: []string{"list", "-n", ns, "--chunk-size", "2", "-o", "custom"}, wantCode: 1},
		{args: []string{"list", "-n", ns, "--chunk-size", "2", "--no-headers", "-o", "name"},
			wantOut: "mxjob.mxnet.mlkube.io/a\nmxjob.mxnet.mlkube.io/b\nmxjob.mxnet.mlkube.io/c\n"},
		{args: []string{"get", "-n", ns, "b", "-o", "jsonpath={.spec.jobMode} {.spec.replicaSpecs[0].replicas}"},
			wantOut: "local 2"},
		{args: []string{"list", "-A", "--field-selector", "metadata.name=c", "-o", "name"},
			wantOut: "mxjob.mxnet.mlkube.io/c\n"},
		{args: []string{"delete", "-n", ns, "a", "b"},
			wantOut: "mxjob.mxnet.mlkube.io \"a\" deleted\nmxjob.mxnet.mlkube.io \"b\" deleted\n"},
		{args: []string{"get", "-n", ns, "a"}, wantCode: cli.ExitUnknown},
		{args: []string{"delete", "-n", ns, "--all"}, wantOut: "mxjob.mxnet.mlkube.io \"c\" deleted\n"},
	}
	for _, s := range steps {
		out, errOut, code := plugin(t, cache, s.stdin, s.args...)
		if code != s.wantCode {
			t.Fatalf("kubectl mxjob %s: exit %d, want %d: %s", strings.Join(s.args, " "), code, s.wantCode, errOut)
		}
		if diff := cmp.Diff(s.wantOut, out); diff != "" {
			t.Errorf("kubectl mxjob %s (-want +got):\n%s", strings.Join(s.args, " "), diff)
		}
	}
}

// TestListTable: the default table, whose AGE comes from the server's creation time.
func TestListTable(t *testing.T) {
	ns := "table"
	server.CreateNamespace(t, ns)
	if _, errOut, code := plugin(t, t.TempDir(), jobs, "create", "-n", ns, "-f", "-"); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code := plugin(t, t.TempDir(), "", "list", "-n", ns)
	if code != 0 {
		t.Fatal(errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME   MODE    STATE     WORKERS   RESTARTS   AGE") ||
		!strings.HasPrefix(lines[2], "b      local   Pending   0/2       0          ") {
		t.Errorf("table:\n%s", out)
	}
}
