package suite

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/controller/kueue"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// Kueue is installed on the e2e clusters (e2e/cluster.InstallKueue) as a cluster admin installs
// it: by `cluster up` on kind, and on the local cluster after the rest of the suite has run without
// it (MLKUBE_E2E_KUEUE=later, hack/cluster/e2e.sh). Each test's admin makes a ClusterQueue with
// quota for four pods of 100m CPU, serving only the test's namespace, and a LocalQueue there; the
// team's editor submits the jobs. The tests run in parallel, after the suite's others: each has
// its own ClusterQueue, and most of their time is spent waiting for jobs that sleep.

// podCPU is what each replica requests: the ClusterQueue's quota is four of them.
const podCPU = "100m"

// needKueue skips the test where the cluster was brought up without Kueue on purpose
// (MLKUBE_E2E_KUEUE=0 or later, e2e/cmd/cluster), and fails it where Kueue should be and is not.
func needKueue(t *testing.T) {
	t.Helper()
	served, err := kueue.Served(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if served {
		return
	}
	if v := os.Getenv("MLKUBE_E2E_KUEUE"); v == "0" || v == "later" {
		t.Skipf("Kueue's API is not served on this cluster, brought up without it (MLKUBE_E2E_KUEUE=%s)", v)
	}
	t.Fatalf("Kueue's API (%s workloads) is not served: install Kueue (`go run ./e2e/cmd/cluster kueue`) and restart the manager, or set MLKUBE_E2E_KUEUE=0 to skip the Kueue tests", kueuev1.GroupVersion)
}

// queueFor onboards a namespace for editor, with a LocalQueue "team" in a ClusterQueue of quota for
// four pods that preempts lower priorities; it returns the namespace and the editor's client.
func queueFor(t *testing.T, editor string) (string, client.Client) {
	t.Helper()
	ns := onboard(t, editor)
	flavor := &kueuev1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	k8s.CreateTemporary(t, flavor)
	cq := &kueuev1.ClusterQueue{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: kueuev1.ClusterQueueSpec{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			Preemption:        &kueuev1.ClusterQueuePreemption{WithinClusterQueue: kueuev1.PreemptionPolicyLowerPriority},
			ResourceGroups: []kueuev1.ResourceGroup{{
				CoveredResources: []corev1.ResourceName{corev1.ResourceCPU},
				Flavors: []kueuev1.FlavorQuotas{{Name: kueuev1.ResourceFlavorReference(ns), Resources: []kueuev1.ResourceQuota{{
					Name: corev1.ResourceCPU, NominalQuota: resource.MustParse("400m"),
				}}}},
			}},
		},
	}
	k8s.CreateTemporary(t, cq)
	k8s.MustCreate(t, &kueuev1.LocalQueue{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: ns},
		Spec:       kueuev1.LocalQueueSpec{ClusterQueue: kueuev1.ClusterQueueReference(ns)},
	})
	return ns, kubetest.Impersonate(t, cfg, k8s.Scheme(), editor)
}

// queuedJob is a dist job of one scheduler, one server and workers workers (each replica sleeps
// for sleep) in LocalQueue team, as the restricted Pod Security Standard admits it.
func queuedJob(ns, name string, workers int32, sleep string) *builders.MxJobBuilder {
	return builders.MxJob(name).Namespace(ns).Dist(1, workers).Env("MXJOB_SLEEP", sleep).Restricted().CPU(podCPU).Queue("team")
}

// admitted waits for the job's Admitted condition to have status, and returns the job.
func admitted(t *testing.T, job *v1beta1.MxJob, status metav1.ConditionStatus, reason string) *v1beta1.MxJob {
	t.Helper()
	return kubetest.WaitFor(t, k8s, fmt.Sprintf("%s Admitted=%s %s", job.Name, status, reason), job, func(j *v1beta1.MxJob) (bool, error) {
		c := meta.FindStatusCondition(j.Status.Conditions, v1beta1.ConditionAdmitted)
		return c != nil && c.Status == status && (reason == "" || c.Reason == reason), nil
	})
}

func TestMxJobsQueuedByKueueRunOneAtATimeWithinQuota(t *testing.T) {
	t.Parallel()
	needKueue(t)
	ns, alice := queueFor(t, "kueue-alice")
	first := queuedJob(ns, "first", 1, "20s").Obj()
	second := queuedJob(ns, "second", 1, "1s").Obj()
	for _, j := range []*v1beta1.MxJob{first, second} {
		if err := alice.Create(context.Background(), j); err != nil {
			t.Fatalf("kueue-alice creating MxJob %s: %v", j.Name, err)
		}
	}
	// 5 pods: more than the quota, ever. Submitted with the plugin, as README.md shows.
	sh := newShell(t).as("kueue-alice")
	sh.do(ns, "mxjob submit big --queue team --workers 3 --image "+builders.DefaultImage+
		" --scheduler-cpu "+podCPU+" --server-cpu "+podCPU+" --worker-cpu "+podCPU+" -- /mxjob-workload", "mxjob.mxnet.mlkube.io/big created")
	big := &v1beta1.MxJob{}
	big.Name, big.Namespace = "big", ns
	// Whichever Kueue admits first runs all three pods; the other holds none until it finishes.
	running, waiting := first, second
	k8s.Eventually(t, "one of the two jobs admitted", func(ctx context.Context) (bool, error) {
		for _, pair := range [][2]*v1beta1.MxJob{{first, second}, {second, first}} {
			var j v1beta1.MxJob
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(pair[0]), &j); err != nil {
				return false, err
			}
			if meta.IsStatusConditionTrue(j.Status.Conditions, v1beta1.ConditionAdmitted) {
				running, waiting = pair[0], pair[1]
				return true, nil
			}
		}
		return false, nil
	})
	// A pod of the waiting job seen before the running job is seen finished was there while it
	// ran: a job's status only moves forward.
	state := func(ctx context.Context) (v1beta1.State, error) {
		var j v1beta1.MxJob
		err := k8s.Get(ctx, client.ObjectKeyFromObject(running), &j)
		return j.Status.State, err
	}
	k8s.Eventually(t, running.Name+" to succeed while "+waiting.Name+" holds no pod", func(ctx context.Context) (bool, error) {
		for _, j := range []*v1beta1.MxJob{waiting, big} {
			pods, err := k8s.Pods(ctx, j)
			if err != nil || len(pods) == 0 {
				continue
			}
			st, err := state(ctx)
			if err != nil {
				return false, err
			}
			if st != v1beta1.StateSucceeded {
				return false, kubetest.Stop(fmt.Errorf("%s has %d pods while %s is %s", j.Name, len(pods), running.Name, st))
			}
		}
		// It succeeds only if all three ran: its scheduler waits for every peer.
		st, err := state(ctx)
		return st == v1beta1.StateSucceeded, err
	})
	k8s.WaitForJob(t, waiting, v1beta1.StateSucceeded)

	// The job that can never fit is never started, and says why.
	got := admitted(t, big, metav1.ConditionFalse, v1beta1.ReasonPending)
	if c := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionAdmitted); !strings.Contains(c.Message, "waiting in LocalQueue team") {
		t.Errorf("Admitted message %q; want the queue", c.Message)
	}
	if pods, err := k8s.Pods(context.Background(), big); err != nil || len(pods) != 0 {
		t.Errorf("the job too big for the quota has %d pods (%v)", len(pods), err)
	}
	sh.do(ns, "mxjob list", regexp.MustCompile(`(?m)^NAME\s+MODE\s+STATE\s+QUEUE`), regexp.MustCompile(`(?m)^big\s+dist\s+Queued\s+team\s`))
	sh.do(ns, "mxjob describe big", regexp.MustCompile(`(?m)^Queue:\s+team$`), regexp.MustCompile(`Admitted:\s+False, reason Pending: waiting in LocalQueue team`))
}

func TestMxJobPreemptedByAHigherPriorityResumesAndSucceeds(t *testing.T) {
	t.Parallel()
	needKueue(t)
	ctx := context.Background()
	ns, bob := queueFor(t, "kueue-bob")
	for name, value := range map[string]int32{ns + "-low": 100, ns + "-high": 1000} {
		k8s.CreateTemporary(t, &kueuev1.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value})
	}
	low := queuedJob(ns, "low", 1, "30s").Priority(ns + "-low").Obj()
	if err := bob.Create(ctx, low); err != nil {
		t.Fatal(err)
	}
	admitted(t, low, metav1.ConditionTrue, "")
	k8s.WaitForJob(t, low, v1beta1.StateRunning)

	high := queuedJob(ns, "high", 1, "1s").Priority(ns + "-high").Obj()
	if err := bob.Create(ctx, high); err != nil {
		t.Fatal(err)
	}
	stopped := admitted(t, low, metav1.ConditionFalse, kueuev1.WorkloadEvictedByPreemption)
	if !stopped.Spec.RunPolicy.Suspended() {
		t.Error("the preempted job is not suspended")
	}
	k8s.WaitForJob(t, high, v1beta1.StateSucceeded)
	done := k8s.WaitForJob(t, low, v1beta1.StateSucceeded)
	if done.Status.Restarts != 0 {
		t.Errorf("the preempted job's restarts %d; want 0: a preemption is no failure", done.Status.Restarts)
	}
	if !meta.IsStatusConditionTrue(done.Status.Conditions, v1beta1.ConditionAdmitted) {
		t.Error("the resumed job does not show Admitted=True")
	}
}
