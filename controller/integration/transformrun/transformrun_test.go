package transformrun

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/controller/transformrun"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// testNamespace creates a namespace of the test's own, holding the Transform md5, which
// reports its transformer ready on the agents' nodes.
func testNamespace(t *testing.T, agents ...*fakeAgent) string {
	t.Helper()
	prefix := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-"))
	// Named apart: without a namespace controller a deleted namespace stays, terminating.
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: strings.Trim(prefix[:min(len(prefix), 50)], "-") + "-"}}
	k8s.CreateTemporary(t, namespace)
	ns := namespace.Name
	tr := builders.Transform("md5").Namespace(ns).Runtime("mlkube/transformer-md5:dev").Obj()
	k8s.MustCreate(t, tr)
	for _, a := range agents {
		tr.Status.Nodes = append(tr.Status.Nodes, v1alpha1.NodeStatus{Node: a.node, Ready: true})
	}
	if err := k8s.Status().Update(context.Background(), tr); err != nil {
		t.Fatal(err)
	}
	return ns
}

// createRun creates a run of md5 from raw/ into out/, 3 workers a node.
func createRun(t *testing.T, ns string, edit func(*v1alpha1.TransformRunSpec)) *v1alpha1.TransformRun {
	t.Helper()
	run := &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Name: "run", Namespace: ns}, Spec: v1alpha1.TransformRunSpec{
		Transform: "md5", Source: v1alpha1.RunSource{Prefix: "raw"}, Destination: v1alpha1.RunDestination{Prefix: "out"},
		WorkersPerNode: ptr.To[int32](3),
	}}
	if edit != nil {
		edit(&run.Spec)
	}
	k8s.MustCreate(t, run)
	return run
}

// waitPhase waits for the run's phase; a run that finishes otherwise fails the test at once.
func waitPhase(t *testing.T, run *v1alpha1.TransformRun, want v1alpha1.RunPhase) *v1alpha1.TransformRun {
	t.Helper()
	return kubetest.WaitFor(t, k8s, "phase "+string(want), run, func(r *v1alpha1.TransformRun) (bool, error) {
		p := r.Status.Phase
		if p != want && (p == v1alpha1.RunSucceeded || p == v1alpha1.RunFailed) {
			return false, kubetest.Stop(errors.New("the run ended " + string(p) + ": " + conditionMessages(r)))
		}
		return p == want, nil
	})
}

func conditionMessages(r *v1alpha1.TransformRun) string {
	var out []string
	for _, c := range r.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
	}
	return strings.Join(out, "; ")
}

func TestTransformRunFansOutAndSucceeds(t *testing.T) {
	a, b := startAgent(t, "fan-a", 10, 4), startAgent(t, "fan-b", 25, 4)
	ns := testNamespace(t, a, b)
	run := createRun(t, ns, nil)
	got := waitPhase(t, run, v1alpha1.RunSucceeded)

	want := v1alpha1.RunCounts{PlannedObjects: 35, PlannedBytes: 3500, DoneObjects: 35, DoneBytes: 3500}
	if diff := cmp.Diff(want, got.Status.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if got.Status.Progress != "35/35" || got.Status.StartTime == nil || got.Status.CompletionTime == nil || got.Status.ETA != "" {
		t.Errorf("progress %q, start %v, completion %v, ETA %q; want 35/35, both times, no ETA",
			got.Status.Progress, got.Status.StartTime, got.Status.CompletionTime, got.Status.ETA)
	}
	if got.Status.ErrorManifest != "mlkube-errors-"+string(got.UID)+".jsonl" {
		t.Errorf("errorManifest %q", got.Status.ErrorManifest)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.RunConditionComplete); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("conditions %s; want Complete", conditionMessages(got))
	}
	var nodes []string
	for _, n := range got.Status.Nodes {
		nodes = append(nodes, n.Node+"="+string(n.Phase))
	}
	if diff := cmp.Diff([]string{"fan-a=Succeeded", "fan-b=Succeeded"}, nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	for _, ag := range []*fakeAgent{a, b} {
		spec := ag.lastSpec()
		if spec.UID != string(got.UID) || spec.Workers != 3 || spec.Pipeline != "md5" || spec.Source.Prefix != "raw" || spec.Destination.Prefix != "out" {
			t.Errorf("%s got share %+v; want the run's UID, 3 workers, md5 raw → out", ag, spec)
		}
		if puts, _, _ := ag.calls(); puts != 1 {
			t.Errorf("%s got %d PUTs; want 1", ag, puts)
		}
	}
}

func TestTransformRunResumesOnARestartedAgent(t *testing.T) {
	a := startAgent(t, "resume-a", 40, 2)
	ns := testNamespace(t, a)
	run := createRun(t, ns, nil)
	kubetest.WaitFor(t, k8s, "some progress", run, func(r *v1alpha1.TransformRun) (bool, error) {
		return r.Status.Totals.DoneObjects >= 4, nil
	})
	a.restart() // the next GET answers 404
	got := waitPhase(t, run, v1alpha1.RunSucceeded)
	if puts, _, _ := a.calls(); puts != 2 {
		t.Errorf("%d PUTs; want 2, the second after the 404", puts)
	}
	tot := got.Status.Totals
	if tot.SkippedObjects == 0 || tot.DoneObjects+tot.SkippedObjects != 40 || got.Status.Progress != "40/40" {
		t.Errorf("totals %+v, progress %q; want the journal's objects skipped and 40/40 in all", tot, got.Status.Progress)
	}
}

func TestTransformRunFailsANodeLostPastTheGracePeriod(t *testing.T) {
	a, b := startAgent(t, "lost-a", 1_000_000, 1), startAgent(t, "lost-b", 1_000_000, 1)
	ns := testNamespace(t, a, b)
	run := createRun(t, ns, nil)
	waitPhase(t, run, v1alpha1.RunRunning)
	lost := time.Now()
	_ = b.srv.Close()

	got := kubetest.WaitFor(t, k8s, "the run failed", run, func(r *v1alpha1.TransformRun) (bool, error) {
		return r.Status.Phase == v1alpha1.RunFailed, nil
	})
	if took := time.Since(lost); took < grace {
		t.Errorf("failed %v after the agent was lost at %v; want the grace period %v first: %s", took, lost, grace, conditionMessages(got))
	}
	c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.RunConditionFailed)
	if c == nil || c.Reason != v1alpha1.RunReasonNodeFailed || !strings.Contains(c.Message, "node lost-b's agent unreachable since") {
		t.Errorf("conditions %s; want Failed saying node lost-b's agent is unreachable since when", conditionMessages(got))
	}
	// Without continueOnError the run fails as a whole: the other node's share is stopped.
	if _, _, deletes := a.calls(); deletes == 0 {
		t.Errorf("%s was not told to stop", a)
	}
	if got.Status.Nodes[0].Phase != v1alpha1.RunSuspended || !strings.Contains(got.Status.Nodes[0].Message, "the run failed on node lost-b") {
		t.Errorf("node lost-a %+v; want stopped, saying why", got.Status.Nodes[0])
	}
}

func TestTransformRunSuspendsAndResumes(t *testing.T) {
	a := startAgent(t, "suspend-a", 200, 1)
	ns := testNamespace(t, a)
	run := createRun(t, ns, nil)
	waitPhase(t, run, v1alpha1.RunRunning)

	kubetest.Patch(t, k8s, run, func(r *v1alpha1.TransformRun) { r.Spec.Suspend = true })
	got := waitPhase(t, run, v1alpha1.RunSuspended)
	if _, _, deletes := a.calls(); deletes == 0 {
		t.Errorf("%s was not told to stop", a)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.RunConditionSuspended); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("conditions %s; want Suspended", conditionMessages(got))
	}
	if got.Status.Nodes[0].Phase != v1alpha1.RunSuspended {
		t.Errorf("node %+v; want Suspended", got.Status.Nodes[0])
	}

	a.setPerGet(50)
	kubetest.Patch(t, k8s, run, func(r *v1alpha1.TransformRun) { r.Spec.Suspend = false })
	got = waitPhase(t, run, v1alpha1.RunSucceeded)
	if puts, _, _ := a.calls(); puts != 2 {
		t.Errorf("%d PUTs; want 2, the second resuming", puts)
	}
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.RunConditionSuspended); c == nil || c.Reason != v1alpha1.RunReasonResumed {
		t.Errorf("conditions %s; want Suspended False, Resumed", conditionMessages(got))
	}
	if tot := got.Status.Totals; tot.DoneObjects+tot.SkippedObjects != 200 {
		t.Errorf("totals %+v; want 200 objects done or skipped", tot)
	}
}

// TestTransformRunStatusWriteRate counts the run's status writes while its agent reports progress
// at every poll: far fewer writes than polls, at most one per status interval.
func TestTransformRunStatusWriteRate(t *testing.T) {
	a := startAgent(t, "rate-a", 1_000_000, 10)
	ns := testNamespace(t, a)
	run := createRun(t, ns, nil)
	waitPhase(t, run, v1alpha1.RunRunning)

	var list v1alpha1.TransformRunList
	w, err := watcher.Watch(context.Background(), &list, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const window = 7 * time.Second
	_, getsBefore, _ := a.calls()
	writes := 0
	deadline := time.After(window)
	for done := false; !done; {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Modified {
				writes++
			}
		case <-deadline:
			done = true
		}
	}
	_, getsAfter, _ := a.calls()
	polls := getsAfter - getsBefore
	// One write per DefaultStatusInterval, and one more for a window that starts just before one.
	if most := int(window/transformrun.DefaultStatusInterval) + 1; writes > most || writes < 2 {
		t.Errorf("%d status writes in %v (%d polls); want between 2 and %d", writes, window, polls, most)
	}
	if polls < 3*writes {
		t.Errorf("%d polls for %d writes; want the polls to outnumber the writes", polls, writes)
	}
	got := &v1alpha1.TransformRun{}
	k8s.MustGet(t, client.ObjectKeyFromObject(run), got)
	if got.Status.ObjectsPerSecond == 0 || got.Status.ETA == "" || got.Status.Rate == "" {
		t.Errorf("rate %d obj/s (%q), ETA %q; want a rate and an estimate", got.Status.ObjectsPerSecond, got.Status.Rate, got.Status.ETA)
	}
}

func TestTransformRunDeletedAfterItsTTL(t *testing.T) {
	a := startAgent(t, "ttl-a", 5, 5)
	ns := testNamespace(t, a)
	run := createRun(t, ns, func(s *v1alpha1.TransformRunSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](1) })
	k8s.Eventually(t, "the finished run deleted", func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKeyFromObject(run), &v1alpha1.TransformRun{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if puts, gets, _ := a.calls(); puts != 1 || gets == 0 {
		t.Errorf("%d PUTs, %d GETs; want the run to have run before its deletion", puts, gets)
	}
}

// TestTransformRunWithContinueOnErrorFinishesListingALostNode: the other node's share runs to
// its end, and the run ends Failed naming the node that did not do its share.
func TestTransformRunWithContinueOnErrorFinishesListingALostNode(t *testing.T) {
	a, b := startAgent(t, "coe-a", 60, 1), startAgent(t, "coe-b", 1_000_000, 1)
	ns := testNamespace(t, a, b)
	run := createRun(t, ns, func(s *v1alpha1.TransformRunSpec) { s.ContinueOnError = true })
	waitPhase(t, run, v1alpha1.RunRunning)
	_ = b.srv.Close()

	got := kubetest.WaitFor(t, k8s, "the run finished", run, func(r *v1alpha1.TransformRun) (bool, error) {
		return r.Status.Phase == v1alpha1.RunFailed, nil
	})
	if _, _, deletes := a.calls(); deletes != 0 {
		t.Errorf("%s was told to stop %d times; want its share to run to its end", a, deletes)
	}
	if n := got.Status.Nodes[0]; n.Phase != v1alpha1.RunSucceeded || n.DoneObjects != 60 {
		t.Errorf("node coe-a %+v; want Succeeded with its 60 objects", n)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.RunConditionFailed)
	if c == nil || !strings.Contains(c.Message, "node coe-b's agent unreachable since") || strings.Contains(c.Message, "coe-a") {
		t.Errorf("conditions %s; want Failed listing node coe-b alone", conditionMessages(got))
	}
}

// TestTransformRunDeletedStopsItsShares: no finalizer, yet the agents are told to stop.
func TestTransformRunDeletedStopsItsShares(t *testing.T) {
	a := startAgent(t, "delete-a", 1_000_000, 1)
	ns := testNamespace(t, a)
	run := createRun(t, ns, nil)
	waitPhase(t, run, v1alpha1.RunRunning)
	if err := k8s.Delete(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	k8s.Eventually(t, "the agent told to stop", func(context.Context) (bool, error) {
		_, _, deletes := a.calls()
		return deletes > 0, nil
	})
}
