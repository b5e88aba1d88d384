package suite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
)

// The jobs' tests that only wait on their own namespace run in parallel, after the suite's others
// (among them those that stop the manager or an agent): most of their time is pods starting and
// replicas sleeping.

func podLogs(t *testing.T, ns, pod string) string {
	t.Helper()
	raw, err := clientset.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: "mxnet"}).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("logs of %s: %v", pod, err)
	}
	return string(raw)
}

// runningJob creates a dist job of one scheduler, one server and workers workers whose every
// replica sleeps for sleep before it exits, and returns it once all its pods run.
func runningJob(t *testing.T, ns, name string, workers int32, sleep string) *v1beta1.MxJob {
	t.Helper()
	job := builders.MxJob(name).Namespace(ns).Dist(1, workers).Env("MXJOB_SLEEP", sleep).Obj()
	k8s.MustCreate(t, job)
	n := 2 + int(workers)
	k8s.Eventually(t, fmt.Sprintf("%d running pods of %s", n, job.Name), func(ctx context.Context) (bool, error) {
		pods, err := k8s.Pods(ctx, job)
		running := 0
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == n, err
	})
	return job
}

func TestMxJobDistRendezvousSucceeds(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	job := builders.MxJob("dist").Namespace(ns).Dist(2, 3).
		RunPolicy(func(rp *v1beta1.RunPolicy) { rp.CleanPodPolicy = v1beta1.CleanPodPolicyNone }).Obj()
	k8s.MustCreate(t, job)
	got := k8s.WaitForJob(t, job, v1beta1.StateSucceeded)
	if got.Status.CompletionTime == nil || got.Status.StartTime == nil {
		t.Errorf("start %v completion %v; want both set", got.Status.StartTime, got.Status.CompletionTime)
	}
	if last := got.Status.Conditions[len(got.Status.Conditions)-1]; last.Type != v1beta1.ConditionSucceeded {
		t.Errorf("latest condition %s; want Succeeded", last.Type)
	}
	// Every replica's log shows it talked to its peers over the network the DMLC env wired up.
	want := map[string][]string{
		"scheduler-0": {"scheduler: all 5 peers registered (2 servers, 3 workers)", "scheduler: all 5 peers done"},
		"server-0":    {"server-0: aggregated 3 workers", "server-0: sent aggregate to worker-2"},
		"server-1":    {"server-1: aggregated 3 workers", "server-1: sent aggregate to worker-0"},
		"worker-0":    {"worker-0: pushed to server-0", "worker-0: pushed to server-1", "worker-0: aggregate OK from server-1"},
		"worker-1":    {"worker-1: aggregate OK from server-0", "worker-1: aggregate OK from server-1"},
		"worker-2":    {"worker-2: aggregate OK from server-0", "worker-2: finished OK"},
	}
	for replica, lines := range want {
		logs := podLogs(t, ns, "dist-"+replica)
		for _, l := range lines {
			if !strings.Contains(logs, l) {
				t.Errorf("%s's log lacks %q:\n%s", replica, l, logs)
			}
		}
	}
}

func TestMxJobLocalSucceeds(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	job := builders.MxJob("local").Namespace(ns).Local().Obj()
	k8s.MustCreate(t, job)
	got := k8s.WaitForJob(t, job, v1beta1.StateSucceeded)
	if c := got.Status.ReplicaStatuses[v1beta1.ReplicaTypeWorker]; c == nil || c.Succeeded != 1 {
		t.Errorf("replica statuses %v; want one succeeded worker", got.Status.ReplicaStatuses)
	}
}

func TestMxJobWorkerExit1UnderNeverFailsTheJob(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	job := builders.MxJob("never").Namespace(ns).Dist(1, 2).
		Env("MXJOB_FAIL_REPLICA", "worker-1", "MXJOB_FAIL_CODE", "1").Obj()
	k8s.MustCreate(t, job)
	got := k8s.WaitForJob(t, job, v1beta1.StateFailed)
	if !strings.Contains(got.Status.Reason, "worker-1 failed: exit code 1 under restartPolicy Never") {
		t.Errorf("reason %q does not name worker-1", got.Status.Reason)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, v1beta1.ConditionFailed) {
		t.Error("no Failed=True condition")
	}
}

// failOnceVolume gives replica i a hostPath marker directory, so "fail once" survives the pod
// being recreated, and pins it to one node, where that directory lives.
func failOnceVolume(t *testing.T, b *builders.MxJobBuilder, i int, ns string) *builders.MxJobBuilder {
	t.Helper()
	var nodes corev1.NodeList
	if err := k8s.List(context.Background(), &nodes); err != nil || len(nodes.Items) == 0 {
		t.Fatalf("listing nodes: %v", err)
	}
	node := nodes.Items[len(nodes.Items)-1].Name
	return b.EditReplica(i, func(rs *v1beta1.ReplicaSpec) {
		spec := &rs.Template.Spec
		spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "marker", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: "/var/tmp/mlkube-e2e/" + ns, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}})
		spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "marker", MountPath: "/marker"})
	})
}

func TestMxJobExit137OnceUnderExitCodeIsRetried(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	b := builders.MxJob("retry").Namespace(ns).Dist(1, 2).
		EditReplica(2, func(rs *v1beta1.ReplicaSpec) { rs.RestartPolicy = v1beta1.RestartPolicyExitCode }).
		ReplicaEnv(2, "MXJOB_FAIL_REPLICA", "worker-1", "MXJOB_FAIL_CODE", "137",
			"MXJOB_FAIL_MODE", "once", "MXJOB_FAIL_ONCE_MARKER", "/marker/failed-once")
	job := failOnceVolume(t, b, 2, ns).Obj()
	k8s.MustCreate(t, job)
	got := k8s.WaitForJob(t, job, v1beta1.StateSucceeded)
	if got.Status.Restarts != 1 {
		t.Errorf("restarts %d; want worker-1 recreated once", got.Status.Restarts)
	}
}

func TestMxJobBackoffLimitExceeded(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	job := builders.MxJob("backoff").Namespace(ns).Local().
		EditReplica(0, func(rs *v1beta1.ReplicaSpec) { rs.RestartPolicy = v1beta1.RestartPolicyExitCode }).
		ReplicaEnv(0, "MXJOB_FAIL_REPLICA", "worker-0", "MXJOB_FAIL_CODE", "137").
		RunPolicy(func(rp *v1beta1.RunPolicy) { rp.BackoffLimit = ptr.To[int32](1) }).Obj()
	k8s.MustCreate(t, job)
	got := k8s.WaitForJob(t, job, v1beta1.StateFailed)
	if !strings.Contains(got.Status.Reason, "exceed runPolicy.backoffLimit 1") {
		t.Errorf("reason %q; want the backoff limit", got.Status.Reason)
	}
}

func TestMxJobSuspendAndResume(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	job := runningJob(t, ns, "pause", 1, "15s")
	k8s.SuspendJob(t, job)
	k8s.ResumeJob(t, job)
	got := k8s.WaitForJob(t, job, v1beta1.StateSucceeded)
	if meta.IsStatusConditionTrue(got.Status.Conditions, v1beta1.ConditionSuspended) {
		t.Error("a resumed job still shows Suspended=True")
	}
}

func TestMxJobDeleteRemovesPodsAndServices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := namespace(t)
	job := runningJob(t, ns, "doomed", 1, "10m")
	if err := k8s.Delete(ctx, job); err != nil {
		t.Fatal(err)
	}
	k8s.Eventually(t, "the job's pods and Services gone", func(ctx context.Context) (bool, error) {
		pods, err := k8s.Pods(ctx, job)
		if err != nil {
			return false, err
		}
		svcs, err := k8s.Services(ctx, job)
		return len(pods) == 0 && len(svcs) == 0, err
	})
}

func TestMxJobSurvivesManagerRestart(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	job := runningJob(t, ns, "resilient", 2, "20s")
	managers, err := managerPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range managers {
		if err := k8s.Delete(ctx, &managers[i]); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	got := k8s.WaitForJob(t, job, v1beta1.StateSucceeded)
	t.Logf("succeeded %s after the manager pod was deleted", time.Since(start).Round(time.Second))
	if got.Status.Restarts != 0 || got.Status.CompletionTime == nil {
		t.Errorf("restarts %d completion %v; want no restarts and a completion time", got.Status.Restarts, got.Status.CompletionTime)
	}
	if c := got.Status.ReplicaStatuses[v1beta1.ReplicaTypeScheduler]; c == nil || c.Succeeded != 1 {
		t.Errorf("replica statuses %v; want the scheduler succeeded", got.Status.ReplicaStatuses)
	}
	scaleManager(t, managerReplicas) // wait for the replacements to be Ready before the next test
}
