package integration

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// The test plays Kueue's scheduler: it admits, evicts and re-admits the job's Workload by
// writing the Workload's status as Kueue does. The cluster tests run the real Kueue.

// jobWorkload waits for the job's one Workload and returns it.
func jobWorkload(t *testing.T, job *v1beta1.MxJob) *kueuev1.Workload {
	t.Helper()
	var wl *kueuev1.Workload
	k8s.Eventually(t, "the job's Workload", func(ctx context.Context) (bool, error) {
		var list kueuev1.WorkloadList
		if err := k8s.List(ctx, &list, client.InNamespace(job.Namespace)); err != nil {
			return false, err
		}
		var owned []kueuev1.Workload
		for _, w := range list.Items {
			if len(w.OwnerReferences) == 1 && w.OwnerReferences[0].Name == job.Name {
				owned = append(owned, w)
			}
		}
		if len(owned) > 1 {
			return false, kubetest.Stop(fmt.Errorf("%d Workloads for one job", len(owned)))
		}
		if len(owned) == 1 {
			wl = &owned[0]
		}
		return wl != nil, nil
	})
	return wl
}

// admit gives the Workload quota in flavor through ClusterQueue cq, as Kueue's scheduler does.
func admit(t *testing.T, ctx context.Context, wl *kueuev1.Workload, cq, flavor string) {
	t.Helper()
	patchWorkloadStatus(t, ctx, wl, func(w *kueuev1.Workload) {
		adm := &kueuev1.Admission{ClusterQueue: kueuev1.ClusterQueueReference(cq)}
		for _, ps := range w.Spec.PodSets {
			adm.PodSetAssignments = append(adm.PodSetAssignments, kueuev1.PodSetAssignment{
				Name: ps.Name, Count: ptr.To(ps.Count),
				Flavors: map[corev1.ResourceName]kueuev1.ResourceFlavorReference{corev1.ResourceCPU: kueuev1.ResourceFlavorReference(flavor)},
			})
		}
		w.Status.Admission = adm
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: kueuev1.WorkloadQuotaReserved, Status: metav1.ConditionTrue, Reason: "QuotaReserved", Message: "Quota reserved in ClusterQueue " + cq})
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: kueuev1.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: "Admitted", Message: "The workload is admitted"})
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: kueuev1.WorkloadEvicted, Status: metav1.ConditionFalse, Reason: "Admitted", Message: "re-admitted"})
	})
}

// patchWorkloadStatus changes the Workload's status as Kueue's controllers do.
func patchWorkloadStatus(t *testing.T, ctx context.Context, wl *kueuev1.Workload, mutate func(*kueuev1.Workload)) {
	t.Helper()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(wl), wl); err != nil {
		t.Fatal(err)
	}
	before := wl.DeepCopy()
	mutate(wl)
	if err := k8s.Status().Patch(ctx, wl, client.MergeFrom(before)); err != nil {
		t.Fatalf("patching the status of Workload %s: %v", wl.Name, err)
	}
}

func TestMxJobQueuedByKueue(t *testing.T) {
	ctx := context.Background()
	flavor := &kueuev1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "queued-pool"}, Spec: kueuev1.ResourceFlavorSpec{
		NodeLabels:  map[string]string{"mlkube.io/pool": "queued"},
		Tolerations: []corev1.Toleration{{Key: "mlkube.io/pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
	}}
	k8s.CreateTemporary(t, flavor)
	job := builders.MxJob("queued").Dist(1, 2).Queue("team-a").Obj()
	k8s.MustCreate(t, job)

	// Created suspended: nothing runs before Kueue admits the whole job.
	var got v1beta1.MxJob
	k8s.MustGet(t, client.ObjectKeyFromObject(job), &got)
	if !got.Spec.RunPolicy.Suspended() {
		t.Fatal("a queued job was created unsuspended")
	}
	wl := jobWorkload(t, job)
	if wl.Spec.QueueName != "team-a" || !slices.Contains(wl.Finalizers, kueuev1.ResourceInUseFinalizerName) || !metav1.IsControlledBy(wl, &got) {
		t.Errorf("Workload queue %q finalizers %v owners %v; want team-a, Kueue's finalizer, the job", wl.Spec.QueueName, wl.Finalizers, wl.OwnerReferences)
	}
	var sets []string
	for _, ps := range wl.Spec.PodSets {
		sets = append(sets, fmt.Sprintf("%s=%d", ps.Name, ps.Count))
	}
	if want := []string{"scheduler=1", "server=1", "worker=2"}; !slices.Equal(sets, want) {
		t.Errorf("pod sets %v; want %v", sets, want)
	}
	pending := kubetest.WaitFor(t, k8s, "Admitted=False Pending", job, func(j *v1beta1.MxJob) (bool, error) {
		c := meta.FindStatusCondition(j.Status.Conditions, v1beta1.ConditionAdmitted)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1beta1.ReasonPending, nil
	})
	if c := meta.FindStatusCondition(pending.Status.Conditions, v1beta1.ConditionAdmitted); c.Message != "waiting in LocalQueue team-a" {
		t.Errorf("Admitted message %q", c.Message)
	}
	if pods, err := k8s.Pods(ctx, job); err != nil || len(pods) != 0 {
		t.Fatalf("%d pods (%v) before admission; want none", len(pods), err)
	}

	// Admitted: the job runs with the flavor's node labels and tolerations on every pod.
	admit(t, ctx, wl, "cluster-a", flavor.Name)
	pods := k8s.WaitForPods(t, "the admitted job's 4 pods", job, 4)
	for _, p := range pods {
		if p.Spec.NodeSelector["mlkube.io/pool"] != "queued" || !slices.ContainsFunc(p.Spec.Tolerations, func(tl corev1.Toleration) bool { return tl.Key == "mlkube.io/pool" }) {
			t.Errorf("pod %s: nodeSelector %v tolerations %v; want the flavor's", p.Name, p.Spec.NodeSelector, p.Spec.Tolerations)
		}
		if p.Labels["kueue.x-k8s.io/podset"] != p.Labels[v1beta1.LabelReplicaType] || p.Labels["kueue.x-k8s.io/cluster-queue-name"] != "cluster-a" {
			t.Errorf("pod %s labels %v; want its pod set and ClusterQueue", p.Name, p.Labels)
		}
	}
	kubetest.WaitFor(t, k8s, "Admitted=True", job, func(j *v1beta1.MxJob) (bool, error) {
		return meta.IsStatusConditionTrue(j.Status.Conditions, v1beta1.ConditionAdmitted), nil
	})
	for _, name := range []string{"scheduler-0", "server-0", "worker-0", "worker-1"} {
		setPhase(t, ctx, job, name, corev1.PodRunning, 0)
	}
	k8s.WaitForJob(t, job, v1beta1.StateRunning)

	// Preempted: suspended, pods gone, templates restored, the reason on the job; the quota is
	// given back only then.
	wl = jobWorkload(t, job)
	patchWorkloadStatus(t, ctx, wl, func(w *kueuev1.Workload) {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: kueuev1.WorkloadEvicted, Status: metav1.ConditionTrue,
			Reason: kueuev1.WorkloadEvictedByPreemption, Message: "Preempted to accommodate a workload of higher priority"})
	})
	// The job's state and its Admitted condition are two controllers' writes: wait for both.
	stopped := kubetest.WaitFor(t, k8s, "Suspended with Admitted=False Preempted", job, func(j *v1beta1.MxJob) (bool, error) {
		c := meta.FindStatusCondition(j.Status.Conditions, v1beta1.ConditionAdmitted)
		return j.Status.State == v1beta1.StateSuspended && c != nil && c.Status == metav1.ConditionFalse &&
			c.Reason == kueuev1.WorkloadEvictedByPreemption, nil
	})
	for _, rs := range stopped.Spec.ReplicaSpecs {
		if rs.Template.Spec.NodeSelector != nil || rs.Template.Spec.Tolerations != nil || rs.Template.Labels["kueue.x-k8s.io/podset"] != "" {
			t.Errorf("%s template keeps the admission's %v %v %v", rs.MxReplicaType, rs.Template.Spec.NodeSelector, rs.Template.Spec.Tolerations, rs.Template.Labels)
		}
	}
	k8s.WaitForPods(t, "the preempted job's pods gone", job, 0)
	wl = kubetest.WaitFor(t, k8s, "the quota released and the Workload requeued", wl, func(w *kueuev1.Workload) (bool, error) {
		return !meta.IsStatusConditionTrue(w.Status.Conditions, kueuev1.WorkloadQuotaReserved) &&
			meta.IsStatusConditionTrue(w.Status.Conditions, kueuev1.WorkloadRequeued), nil
	})

	// Re-admitted: it runs again from the start, its restart count not charged for the preemption.
	admit(t, ctx, wl, "cluster-a", flavor.Name)
	k8s.WaitForPods(t, "the re-admitted job's 4 pods", job, 4)
	for _, name := range []string{"scheduler-0", "server-0", "worker-0", "worker-1"} {
		setPhase(t, ctx, job, name, corev1.PodRunning, 0)
	}
	setPhase(t, ctx, job, "scheduler-0", corev1.PodSucceeded, 0)
	done := k8s.WaitForJob(t, job, v1beta1.StateSucceeded)
	if done.Status.Restarts != 0 {
		t.Errorf("restarts %d after a preemption; want 0", done.Status.Restarts)
	}
	kubetest.WaitFor(t, k8s, "the Workload finished", wl, func(w *kueuev1.Workload) (bool, error) {
		c := meta.FindStatusCondition(w.Status.Conditions, kueuev1.WorkloadFinished)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == kueuev1.WorkloadFinishedReasonSucceeded, nil
	})
}

func TestMxJobWithoutQueueIsNotQueued(t *testing.T) {
	job := builders.MxJob("unqueued").Local().Obj()
	k8s.MustCreate(t, job)
	k8s.WaitForPods(t, "the job's pod", job, 1)
	var list kueuev1.WorkloadList
	if err := k8s.List(context.Background(), &list, client.InNamespace(job.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, w := range list.Items {
		if w.OwnerReferences[0].Name == job.Name {
			t.Errorf("Workload %s made for a job without a queue", w.Name)
		}
	}
}
