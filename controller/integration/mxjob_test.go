package integration

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// setPhase plays the kubelet: it reports a pod's phase and its mxnet container's exit code.
func setPhase(t *testing.T, ctx context.Context, job *v1beta1.MxJob, name string, phase corev1.PodPhase, code int32) {
	t.Helper()
	var pod corev1.Pod
	k8s.MustGet(t, client.ObjectKey{Namespace: job.Namespace, Name: job.Name + "-" + name}, &pod)
	pod.Status.Phase = phase
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
	if phase == corev1.PodSucceeded || phase == corev1.PodFailed {
		state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.Now()}}
	}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "mxnet", Image: "x", ImageID: "x", State: state}}
	if err := k8s.Status().Update(ctx, &pod); err != nil {
		t.Fatal(err)
	}
}

func TestMxJobReconcileLoopToSuccess(t *testing.T) {
	ctx := context.Background()
	job := builders.MxJob("loop").Dist(1, 2).Obj()
	k8s.MustCreate(t, job)
	k8s.Eventually(t, "4 pods and 4 Services", func(ctx context.Context) (bool, error) {
		pods, err := k8s.Pods(ctx, job)
		var svcs []corev1.Service
		if err == nil {
			svcs, err = k8s.Services(ctx, job)
		}
		return len(pods) == 4 && len(svcs) == 4, err
	})
	pods, _ := k8s.Pods(ctx, job)
	for _, p := range pods {
		env := map[string]string{}
		for _, e := range p.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		if env["DMLC_PS_ROOT_URI"] != "loop-scheduler-0" || env["DMLC_NUM_WORKER"] != "2" || !strings.Contains(env["MX_CONFIG"], `"task":{"type":"`+env["DMLC_ROLE"]) {
			t.Errorf("pod %s has env %v", p.Name, env)
		}
		if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Name != "loop" {
			t.Errorf("pod %s is not owned by the job", p.Name)
		}
	}
	for _, name := range []string{"scheduler-0", "server-0", "worker-0", "worker-1"} {
		setPhase(t, ctx, job, name, corev1.PodRunning, 0)
	}
	k8s.WaitForJob(t, job, v1beta1.StateRunning)
	kubetest.WaitFor(t, k8s, "the Running condition", job, func(got *v1beta1.MxJob) (bool, error) {
		return meta.IsStatusConditionTrue(got.Status.Conditions, v1beta1.ConditionRunning), nil
	})

	setPhase(t, ctx, job, "scheduler-0", corev1.PodSucceeded, 0)
	got := k8s.WaitForJob(t, job, v1beta1.StateSucceeded)
	if got.Status.CompletionTime == nil || got.Status.StartTime == nil {
		t.Errorf("start %v completion %v; want both", got.Status.StartTime, got.Status.CompletionTime)
	}
	if last := got.Status.Conditions[len(got.Status.Conditions)-1]; last.Type != v1beta1.ConditionSucceeded {
		t.Errorf("latest condition %s; want Succeeded", last.Type)
	}
	// cleanPodPolicy Running (the default): the server and workers go, the scheduler stays.
	k8s.Eventually(t, "running pods cleaned up", func(ctx context.Context) (bool, error) {
		pods, err := k8s.Pods(ctx, job)
		return len(pods) == 1 && pods[0].Name == "loop-scheduler-0", err
	})
}

func TestMxJobFailedWorkerUnderNever(t *testing.T) {
	ctx := context.Background()
	job := builders.MxJob("never").Dist(1, 2).Obj()
	k8s.MustCreate(t, job)
	k8s.WaitForPods(t, "4 pods", job, 4)
	setPhase(t, ctx, job, "worker-1", corev1.PodFailed, 1)
	got := k8s.WaitForJob(t, job, v1beta1.StateFailed)
	if !strings.Contains(got.Status.Reason, "worker-1 failed: exit code 1") {
		t.Errorf("reason %q does not name worker-1", got.Status.Reason)
	}
	// The job stays failed when a pod is deleted by hand: nothing restarts it.
	if err := k8s.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: "never-worker-1"}}); err != nil {
		t.Fatal(err)
	}
	k8s.WaitForPods(t, "the pods cleaned up", job, 0)
	var again v1beta1.MxJob
	k8s.MustGet(t, client.ObjectKeyFromObject(job), &again)
	if again.Status.State != v1beta1.StateFailed {
		t.Errorf("state %s after a pod was deleted by hand; want Failed", again.Status.State)
	}
}

func TestMxJobExitCodeRetryThenBackoffLimit(t *testing.T) {
	ctx := context.Background()
	job := builders.MxJob("exitcode").Local().
		EditReplica(0, func(rs *v1beta1.ReplicaSpec) { rs.RestartPolicy = v1beta1.RestartPolicyExitCode }).
		RunPolicy(func(rp *v1beta1.RunPolicy) { rp.BackoffLimit = ptr.To[int32](1) }).Obj()
	k8s.MustCreate(t, job)
	var first corev1.Pod
	k8s.Eventually(t, "the worker pod", func(ctx context.Context) (bool, error) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: "exitcode-worker-0"}, &first)
		return err == nil, nil
	})
	setPhase(t, ctx, job, "worker-0", corev1.PodFailed, 137)
	k8s.Eventually(t, "the worker recreated after its backoff", func(ctx context.Context) (bool, error) {
		var p corev1.Pod
		err := k8s.Get(ctx, client.ObjectKey{Namespace: job.Namespace, Name: "exitcode-worker-0"}, &p)
		return err == nil && p.UID != first.UID, nil
	})
	var got v1beta1.MxJob
	k8s.MustGet(t, client.ObjectKeyFromObject(job), &got)
	if got.Status.Restarts != 1 || got.Status.State != v1beta1.StateRunning {
		t.Fatalf("restarts %d state %s; want 1 and Running", got.Status.Restarts, got.Status.State)
	}
	setPhase(t, ctx, job, "worker-0", corev1.PodFailed, 137)
	failed := k8s.WaitForJob(t, job, v1beta1.StateFailed)
	if !strings.Contains(failed.Status.Reason, "2 restarts exceed runPolicy.backoffLimit 1") {
		t.Errorf("reason %q; want the backoff limit", failed.Status.Reason)
	}
}

func TestMxJobSuspendAndResume(t *testing.T) {
	ctx := context.Background()
	job := builders.MxJob("pause").Local().Obj()
	k8s.MustCreate(t, job)
	k8s.WaitForPods(t, "the worker pod", job, 1)
	k8s.SuspendJob(t, job)
	k8s.ResumeJob(t, job)
	k8s.WaitForPods(t, "the pods recreated", job, 1)
	setPhase(t, ctx, job, "worker-0", corev1.PodSucceeded, 0)
	k8s.WaitForJob(t, job, v1beta1.StateSucceeded)
}
