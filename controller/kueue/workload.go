package kueue

import (
	"context"
	"crypto/sha1" //nolint:gosec // a name suffix, not a security boundary; Kueue derives its own the same way
	"encoding/hex"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueconstants "sigs.k8s.io/kueue/pkg/constants"
	"sigs.k8s.io/kueue/pkg/controller/constants"
	"sigs.k8s.io/kueue/pkg/podset"
	"sigs.k8s.io/kueue/pkg/util/priority"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// workloadName is the job's Workload: mxjob-<job>-<5 hex digits of a hash of the job's name and
// UID>, as Kueue names its own integrations' Workloads, so that a job deleted and created again
// under the same name never adopts its predecessor's Workload.
func workloadName(job *v1beta1.MxJob) string {
	h := sha1.Sum([]byte(gvk.Kind + "\n" + gvk.Group + "\n" + job.Name + "\n" + string(job.UID))) //nolint:gosec // see the import
	return "mxjob-" + job.Name + "-" + hex.EncodeToString(h[:])[:5]
}

// newWorkload is the Workload Kueue queues for the job: its pod sets in the LocalQueue the job's
// label names, owned by the job (so that deleting the job deletes it) and held by Kueue's
// resource-in-use finalizer until the job no longer runs. It carries mlkube's managed-by label,
// by which the manager caches only its own Workloads.
func newWorkload(job *v1beta1.MxJob, scheme *runtime.Scheme) (*kueuev1.Workload, error) {
	wl := &kueuev1.Workload{}
	wl.Name, wl.Namespace = workloadName(job), job.Namespace
	wl.Labels = map[string]string{constants.JobUIDLabel: string(job.UID), labels.ManagedBy: labels.ManagedByValue}
	wl.Finalizers = []string{kueuev1.ResourceInUseFinalizerName}
	wl.Spec.QueueName = kueuev1.LocalQueueName(job.Labels[labels.KueueQueueName])
	wl.Spec.PodSets = podSets(job)
	return wl, controllerutil.SetControllerReference(job, wl, scheme)
}

// setPriority gives the Workload its priority as Kueue's job framework does: from the
// WorkloadPriorityClass the job's label names, else from the first PriorityClass a template
// names, else the cluster's default.
func setPriority(ctx context.Context, c client.Client, job *v1beta1.MxJob, wl *kueuev1.Workload) error {
	var (
		ref *kueuev1.PriorityClassRef
		p   int32
		err error
	)
	if name := job.Labels[labels.KueuePriorityClass]; name != "" {
		ref, p, err = priority.GetPriorityFromWorkloadPriorityClass(ctx, c, name)
	} else {
		ref, p, err = priority.GetPriorityFromPriorityClass(ctx, c, podPriorityClass(wl.Spec.PodSets))
	}
	if err != nil {
		return err
	}
	wl.Spec.PriorityClassRef, wl.Spec.Priority = ref, &p
	return nil
}

func podPriorityClass(sets []kueuev1.PodSet) string {
	for _, s := range sets {
		if s.Template.Spec.PriorityClassName != "" {
			return s.Template.Spec.PriorityClassName
		}
	}
	return ""
}

// admissionInfos are what the Workload's admission assigns to each pod set, in the Workload's
// pod set order: the flavors' node labels and tolerations, the pod set and queue labels Kueue's
// own integrations put on pods, and the admission checks' updates.
func admissionInfos(ctx context.Context, c client.Client, wl *kueuev1.Workload) ([]podset.PodSetInfo, error) {
	adm := wl.Status.Admission
	infos := make([]podset.PodSetInfo, len(adm.PodSetAssignments))
	for i := range adm.PodSetAssignments {
		a := &adm.PodSetAssignments[i]
		ps := findPodSet(wl, a.Name)
		if ps == nil {
			return nil, fmt.Errorf("%w: the admission assigns pod set %q, which the Workload does not have", podset.ErrInvalidPodsetInfo, a.Name)
		}
		info, err := podset.FromAssignment(ctx, c, a, ps)
		if err != nil {
			return nil, fmt.Errorf("reading the flavors of pod set %s: %w", a.Name, err)
		}
		info.Labels[kueueconstants.PodSetLabel] = string(a.Name)
		info.Labels[kueueconstants.LocalQueueLabel] = string(wl.Spec.QueueName)
		if validation.IsDNS1123Label(string(adm.ClusterQueue)) == nil {
			info.Labels[kueueconstants.ClusterQueueLabel] = string(adm.ClusterQueue)
		}
		for _, check := range wl.Status.AdmissionChecks {
			for j := range check.PodSetUpdates {
				if u := &check.PodSetUpdates[j]; u.Name == a.Name {
					if err := info.Merge(podset.FromUpdate(u)); err != nil {
						return nil, fmt.Errorf("in admission check %q: %w", check.Name, err)
					}
				}
			}
		}
		infos[i] = info
	}
	return infos, nil
}

func findPodSet(wl *kueuev1.Workload, name kueuev1.PodSetReference) *kueuev1.PodSet {
	for i := range wl.Spec.PodSets {
		if wl.Spec.PodSets[i].Name == name {
			return &wl.Spec.PodSets[i]
		}
	}
	return nil
}
