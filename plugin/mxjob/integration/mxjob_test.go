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
	runSteps(t, []step{
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
	})
}

// step is one command a test runs, and what it must print and exit with.
type step struct {
	args     []string
	stdin    string
	wantOut  string
	wantCode int
}

// runSteps runs the steps in order, sharing one discovery cache, and stops at the first that
// exits otherwise than expected: the later ones build on it.
func runSteps(t *testing.T, steps []step) {
	t.Helper()
	cache := t.TempDir()
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
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME   MODE    STATE     QUEUE   WORKERS   RESTARTS   AGE") ||
		!strings.HasPrefix(lines[2], "b      local   Pending   -       0/2       0          ") {
		t.Errorf("table:\n%s", out)
	}
}

// kubeflowQueued is a Kubeflow MXJob with a Volcano scheduling policy, which create maps onto
// Kueue's label and the templates' priority class.
const kubeflowQueued = `apiVersion: kubeflow.org/v1
kind: MXJob
metadata: {name: kf}
spec:
  runPolicy:
    schedulingPolicy: {queue: team, priorityClass: high, minAvailable: 2}
  mxReplicaSpecs:
    Worker:
      template: {spec: {containers: [{name: mxnet, image: mxnet:1.9}]}}
`

// TestQueued: jobs queued for Kueue by submit --queue and by a Kubeflow schedulingPolicy are
// stored with their labels and priority class, and list shows their queue. No Kueue runs here:
// what it does with them is e2e's to test.
func TestQueued(t *testing.T) {
	ns := "queued"
	server.CreateNamespace(t, ns)
	runSteps(t, []step{
		{args: []string{"submit", "-n", ns, "sub", "--mode", "local", "--image", "mxnet:1.9", "--queue", "team", "--priority-class", "high", "--", "python"},
			wantOut: "mxjob.mxnet.mlkube.io/sub created\n"},
		{args: []string{"create", "-n", ns, "-f", "-"}, stdin: kubeflowQueued, wantOut: "mxjob.mxnet.mlkube.io/kf created\n"},
		{args: []string{"get", "-n", ns, "sub", "-o", "jsonpath={.metadata.labels}"},
			wantOut: `{"kueue.x-k8s.io/priority-class":"high","kueue.x-k8s.io/queue-name":"team"}`},
		{args: []string{"get", "-n", ns, "kf", "-o", "jsonpath={.metadata.labels} {.spec.replicaSpecs[0].template.spec.priorityClassName}"},
			wantOut: `{"kueue.x-k8s.io/queue-name":"team"} high`},
	})
	// No controller writes a state here: both are Pending, in LocalQueue team.
	out, errOut, code := plugin(t, t.TempDir(), "", "list", "-n", ns, "--no-headers")
	if code != 0 {
		t.Fatal(errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Errorf("want kf and sub:\n%s", out)
	}
	for _, line := range lines {
		if f := strings.Fields(line); len(f) != 7 || f[2] != "Pending" || f[3] != "team" {
			t.Errorf("not a Pending job of queue team: %q", line)
		}
	}
}
