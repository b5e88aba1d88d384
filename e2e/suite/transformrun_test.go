package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/e2e/workloads/objects"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// md5OrRefuse answers an object's md5 (hex), refuses a poisoned one, and with DELAY set takes
// that many seconds per object, so a run lasts long enough to be interrupted.
const md5OrRefuse = `import hashlib, os, time
DELAY = float(os.environ.get("DELAY", "0"))

def transform(data):
    if data.startswith(b"poison"):
        raise ValueError("poisoned object")
    if DELAY:
        time.sleep(DELAY)
    return hashlib.md5(data).hexdigest().encode()
`

// runCluster is a namespace with a client pod on every ready node and the md5OrRefuse Transform
// Running on all of them.
type runCluster struct {
	ns      string
	nodes   []string
	clients map[string]string // node → client pod
	tr      *v1alpha1.Transform
}

func newRunCluster(t *testing.T, delay string) *runCluster {
	t.Helper()
	c := &runCluster{ns: namespace(t), nodes: readyNodes(t), clients: map[string]string{}}
	for _, node := range c.nodes {
		c.clients[node] = clientOn(t, c.ns, node)
	}
	c.tr = builders.Transform("md5").Namespace(c.ns).Code("python3.11", md5OrRefuse).Spec(func(s *v1alpha1.TransformSpec) {
		s.Env = []corev1.EnvVar{{Name: "DELAY", Value: delay}}
	}).Obj()
	k8s.MustCreate(t, c.tr)
	k8s.WaitForStage(t, c.tr, v1alpha1.StageRunning)
	return c
}

// generate puts count objects under dir on every node (poison ≥ 0 poisons that one) through the
// object API, each node's shard named for it (?node=) as a user spreads a dataset by hand.
func (c *runCluster) generate(t *testing.T, dir string, count, poison int) {
	t.Helper()
	for _, node := range c.nodes {
		shard := map[string][]byte{}
		for i := range count {
			shard[dir+"/"+objects.Name(i)] = objects.Content(i, node, i == poison)
		}
		putObjects(t, c.ns, node, shard)
	}
}

// contents returns every visible file under dir of node's data, by relative name.
func (c *runCluster) contents(t *testing.T, node, dir string) map[string]string {
	t.Helper()
	code, body := proxyResult(clientset.CoreV1().RESTClient().Get().Namespace(c.ns).Resource("pods").Name(c.clients[node]+":8080").
		SubResource("proxy").Suffix("contents", c.ns, dir).Do(context.Background()))
	var files map[string]string
	if code == http.StatusNotFound { // nothing written there yet: the agent makes a destination as it writes
		return files
	}
	if err := json.Unmarshal([]byte(body), &files); code != 200 || err != nil {
		t.Fatalf("contents of %s on %s: %d %.300s (%v)", dir, node, code, body, err)
	}
	return files
}

// listing names every file under dir of node's data, hidden ones included; none when dir does not
// exist yet.
func (c *runCluster) listing(t *testing.T, node, dir string) []string {
	t.Helper()
	code, body := nodeFiles(c.ns, c.clients[node], http.MethodGet, dir)
	switch code {
	case http.StatusOK:
		return strings.Fields(body)
	case http.StatusNotFound:
		return nil
	}
	t.Fatalf("listing %s on %s: %d %.300s", dir, node, code, body)
	return nil
}

func (c *runCluster) run(name string, edit func(*v1alpha1.TransformRunSpec)) *v1alpha1.TransformRun {
	r := &v1alpha1.TransformRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns},
		Spec: v1alpha1.TransformRunSpec{
			Transform:   c.tr.Name,
			Source:      v1alpha1.RunSource{Prefix: "raw"},
			Destination: v1alpha1.RunDestination{Prefix: "out"},
		},
	}
	if edit != nil {
		edit(&r.Spec)
	}
	return r
}

// waitRun waits for run's phase; another final phase stops the wait at once.
func waitRun(t *testing.T, run *v1alpha1.TransformRun, phase v1alpha1.RunPhase) *v1alpha1.TransformRun {
	t.Helper()
	return kubetest.WaitFor(t, k8s, fmt.Sprintf("TransformRun %s %s", run.Name, phase), run, func(r *v1alpha1.TransformRun) (bool, error) {
		switch p := r.Status.Phase; p {
		case phase:
			return true, nil
		case v1alpha1.RunSucceeded, v1alpha1.RunFailed:
			return false, kubetest.Stop(fmt.Errorf("phase %s (%+v), want %s", p, r.Status.Conditions, phase))
		}
		return false, nil
	})
}

// wantOutputs checks that out on every node holds exactly the md5 of each of its own count
// generated objects (skip: indexes not expected), and nothing else but error manifests.
func (c *runCluster) wantOutputs(t *testing.T, count int, skip map[int]bool) {
	t.Helper()
	for _, node := range c.nodes {
		got := c.contents(t, node, "out")
		for name := range got {
			if strings.HasPrefix(name, "mlkube-errors-") { // error manifests, checked by the tests that expect them
				delete(got, name)
			}
		}
		want := map[string]string{}
		for i := range count {
			if !skip[i] {
				want[objects.Name(i)] = md5hex(objects.Content(i, node, false))
			}
		}
		bad := 0
		for name, sum := range want {
			if got[name] != sum && bad < 5 {
				bad++
				t.Errorf("node %s: out/%s = %q, want %s (the md5 of the node's own object)", node, name, got[name], sum)
			}
		}
		if len(got) != len(want) {
			t.Errorf("node %s: %d outputs, want %d", node, len(got), len(want))
		}
		for _, name := range c.listing(t, node, "out") {
			if strings.HasSuffix(name, ".tmp") {
				t.Errorf("node %s: temporary file %s left in the destination", node, name)
			}
		}
	}
}

// totals are the counts of a run that did perNode objects on every node.
func (c *runCluster) totals(perNode int64) v1alpha1.RunCounts {
	n := int64(len(c.nodes))
	return v1alpha1.RunCounts{PlannedObjects: n * perNode, DoneObjects: n * perNode}
}

// TestTransformRunMD5OnEveryNode: 500 objects on each node go through md5 into out, each node
// transforming its own; every output is right and the counters exact; a dry run counts the
// same and writes nothing; a second run into the same destination refuses what exists.
func TestTransformRunMD5OnEveryNode(t *testing.T) {
	const count = 500
	c := newRunCluster(t, "0")
	c.generate(t, "raw", count, -1)

	dry := c.run("dry", func(s *v1alpha1.TransformRunSpec) { s.DryRun = true })
	k8s.MustCreate(t, dry)
	dry = waitRun(t, dry, v1alpha1.RunSucceeded)
	if got := dry.Status.Totals; got.PlannedObjects != int64(count*len(c.nodes)) || got.DoneObjects != 0 {
		t.Errorf("dry run counts %+v, want %d planned and none done", got, count*len(c.nodes))
	}
	for _, node := range c.nodes {
		if files := c.contents(t, node, "out"); len(files) != 0 {
			t.Errorf("the dry run wrote %d files on %s", len(files), node)
		}
	}

	run := c.run("md5", func(s *v1alpha1.TransformRunSpec) { s.WorkersPerNode = ptr.To[int32](8) })
	k8s.MustCreate(t, run)
	// Start-up latency, create to the first result on a node, as the user sees it (reported, not
	// asserted: the figure of issue 12's benchmark).
	created := time.Now()
	fast := k8s
	fast.Interval = 20 * time.Millisecond // the suite's 1 s would round the figure away
	fast.Eventually(t, "a first result on "+c.nodes[0], func(context.Context) (bool, error) {
		return slices.ContainsFunc(c.listing(t, c.nodes[0], "out"), func(name string) bool { return strings.HasPrefix(name, "obj-") }), nil
	})
	t.Logf("start-up: %s from create to the first result on %s (polled through the API server)", time.Since(created).Round(time.Millisecond), c.nodes[0])
	run = waitRun(t, run, v1alpha1.RunSucceeded)
	c.wantOutputs(t, count, nil)
	if got, want := run.Status.Totals, c.totals(count); got.PlannedObjects != want.PlannedObjects || got.DoneObjects != want.DoneObjects || got.FailedObjects != 0 {
		t.Errorf("totals %+v, want %+v", got, want)
	}
	if len(run.Status.Nodes) != len(c.nodes) {
		t.Errorf("status has %d nodes, want %d", len(run.Status.Nodes), len(c.nodes))
	}
	for _, n := range run.Status.Nodes {
		if n.Phase != v1alpha1.RunSucceeded || n.DoneObjects != count {
			t.Errorf("node %s: %s with %d done, want Succeeded with %d", n.Node, n.Phase, n.DoneObjects, count)
		}
	}
	if run.Status.Progress != fmt.Sprintf("%d/%d", count*len(c.nodes), count*len(c.nodes)) || run.Status.CompletionTime == nil {
		t.Errorf("progress %q, completion %v", run.Status.Progress, run.Status.CompletionTime)
	}

	again := c.run("again", nil)
	k8s.MustCreate(t, again)
	again = waitRun(t, again, v1alpha1.RunFailed)
	if again.Status.Totals.DoneObjects != 0 || again.Status.Totals.FailedObjects == 0 {
		t.Errorf("a run into existing outputs without overwrite: %+v, want every object refused", again.Status.Totals)
	}
	c.wantOutputs(t, count, nil) // untouched
}

// TestTransformRunPoisonedObject: without continueOnError a poisoned object fails the run and is
// listed; with it, every other object is done and the error manifest lists exactly the poisoned
// one on each node.
func TestTransformRunPoisonedObject(t *testing.T) {
	const count, poison = 100, 42
	c := newRunCluster(t, "0")
	c.generate(t, "raw", count, poison)

	strict := c.run("strict", func(s *v1alpha1.TransformRunSpec) { s.Destination.Prefix = "strict" })
	k8s.MustCreate(t, strict)
	strict = waitRun(t, strict, v1alpha1.RunFailed)
	if !listsPoison(strict.Status.Errors, poison) {
		t.Errorf("the failed run's errors %+v do not list %s", strict.Status.Errors, objects.Name(poison))
	}

	lenient := c.run("lenient", func(s *v1alpha1.TransformRunSpec) { s.ContinueOnError = true })
	k8s.MustCreate(t, lenient)
	lenient = kubetest.WaitFor(t, k8s, "the lenient run to finish", lenient, func(r *v1alpha1.TransformRun) (bool, error) {
		return r.Status.CompletionTime != nil, nil
	})
	n := int64(len(c.nodes))
	if got := lenient.Status.Totals; got.DoneObjects != n*(count-1) || got.FailedObjects != n {
		t.Errorf("totals %+v, want %d done and %d failed", got, n*(count-1), n)
	}
	c.wantOutputs(t, count, map[int]bool{poison: true})
	for _, node := range c.nodes {
		manifest := c.contents(t, node, "out")[wire.ErrorManifest(string(lenient.UID))]
		lines := strings.Split(strings.TrimSpace(manifest), "\n")
		var e v1alpha1.ObjectError
		if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &e) != nil || !strings.HasSuffix(e.Object, objects.Name(poison)) || !strings.Contains(e.Message, "poisoned") {
			t.Errorf("node %s: error manifest %q, want one line for %s", node, manifest, objects.Name(poison))
		}
	}
}

func listsPoison(errs []v1alpha1.ObjectError, poison int) bool {
	for _, e := range errs {
		if strings.HasSuffix(e.Object, objects.Name(poison)) && strings.Contains(e.Message, "poisoned") {
			return true
		}
	}
	return false
}

// TestTransformRunResumesAfterItsAgentIsDeleted: the agent of one node is deleted mid-run; its
// replacement resumes from the journal and the run succeeds with every output right, none
// partial, and the objects done before the loss not done again.
func TestTransformRunResumesAfterItsAgentIsDeleted(t *testing.T) {
	const count = 400
	c := newRunCluster(t, "0.02")
	c.generate(t, "raw", count, -1)
	run := c.run("resume", func(s *v1alpha1.TransformRunSpec) { s.WorkersPerNode = ptr.To[int32](2) })
	k8s.MustCreate(t, run)
	node := c.nodes[0]
	kubetest.WaitFor(t, k8s, "node "+node+" a quarter done", run, func(r *v1alpha1.TransformRun) (bool, error) {
		for _, n := range r.Status.Nodes {
			if n.Node == node && n.DoneObjects >= count/4 {
				if n.DoneObjects >= count {
					return false, kubetest.Stop(fmt.Errorf("node %s finished before its agent could be deleted", node))
				}
				return true, nil
			}
		}
		return false, nil
	})
	deleteAgentOn(t, node)
	run = waitRun(t, run, v1alpha1.RunSucceeded)
	c.wantOutputs(t, count, nil)
	for _, n := range run.Status.Nodes {
		if n.Node == node && (n.SkippedObjects == 0 || n.DoneObjects+n.SkippedObjects != count) {
			t.Errorf("node %s after its agent's loss: %d done, %d skipped; want the journal's objects skipped and the rest done, %d in all",
				node, n.DoneObjects, n.SkippedObjects, count)
		}
	}
}

// TestTransformRunSuspendAndResume: a suspended run stops its workers and keeps its phase;
// resumed, it finishes without redoing what it did.
func TestTransformRunSuspendAndResume(t *testing.T) {
	const count = 300
	c := newRunCluster(t, "0.05") // 300 objects take 7.5 s a node: the suspend lands mid-run
	c.generate(t, "raw", count, -1)
	run := c.run("pause", func(s *v1alpha1.TransformRunSpec) { s.WorkersPerNode = ptr.To[int32](2) })
	k8s.MustCreate(t, run)
	kubetest.WaitFor(t, k8s, "the run to get going", run, func(r *v1alpha1.TransformRun) (bool, error) {
		return r.Status.Totals.DoneObjects > 0, nil
	})
	kubetest.Patch(t, k8s, run, func(r *v1alpha1.TransformRun) { r.Spec.Suspend = true })
	suspended := waitRun(t, run, v1alpha1.RunSuspended)
	held := suspended.Status.Totals.DoneObjects
	// Nothing more is done while suspended: the next status written says the same.
	again := kubetest.WaitFor(t, k8s, "status written again while suspended", run, func(r *v1alpha1.TransformRun) (bool, error) {
		return r.ResourceVersion != suspended.ResourceVersion || r.Status.Phase != v1alpha1.RunSuspended, nil
	})
	if again.Status.Phase == v1alpha1.RunSuspended && again.Status.Totals.DoneObjects != held {
		t.Errorf("done went from %d to %d while suspended", held, again.Status.Totals.DoneObjects)
	}
	kubetest.Patch(t, k8s, run, func(r *v1alpha1.TransformRun) { r.Spec.Suspend = false })
	run = waitRun(t, run, v1alpha1.RunSucceeded)
	c.wantOutputs(t, count, nil)
	// What was done before the suspension is skipped on resume, not done again.
	if got := run.Status.Totals; got.SkippedObjects < held || got.DoneObjects+got.SkippedObjects != int64(count*len(c.nodes)) {
		t.Errorf("after resuming: %d done, %d skipped; want at least the %d done before skipped, %d in all",
			got.DoneObjects, got.SkippedObjects, held, count*len(c.nodes))
	}
}

// deleteAgentOn deletes the node agent pod of node and waits for its replacement to be Ready.
func deleteAgentOn(t *testing.T, node string) {
	t.Helper()
	ctx := context.Background()
	pods := func() []corev1.Pod {
		var l corev1.PodList
		if err := k8s.List(ctx, &l, client.InNamespace(dataPathNamespace), client.MatchingLabels{"app.kubernetes.io/component": "node-agent"}); err != nil {
			t.Fatal(err)
		}
		var on []corev1.Pod
		for _, p := range l.Items {
			if p.Spec.NodeName == node {
				on = append(on, p)
			}
		}
		return on
	}
	old := pods()
	if len(old) != 1 {
		t.Fatalf("%d agent pods on %s", len(old), node)
	}
	if err := k8s.Delete(ctx, &old[0]); err != nil {
		t.Fatal(err)
	}
	k8s.Eventually(t, "a new agent Ready on "+node, func(context.Context) (bool, error) {
		for _, p := range pods() {
			if p.UID != old[0].UID && p.DeletionTimestamp == nil {
				for _, cond := range p.Status.Conditions {
					if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
						return true, nil
					}
				}
			}
		}
		return false, nil
	})
}
