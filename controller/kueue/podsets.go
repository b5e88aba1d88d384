package kueue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// podSetName is a replica type's pod set: its role, since Kueue's pod set names are DNS labels.
func podSetName(t v1beta1.ReplicaType) kueuev1.PodSetReference {
	return kueuev1.PodSetReference(t.Role())
}

// podSets are the job's pod sets, one per replica type in the order the controller starts them,
// each with the replica count and a copy of the template whose requests Kueue charges.
func podSets(job *v1beta1.MxJob) []kueuev1.PodSet {
	var sets []kueuev1.PodSet
	for _, t := range v1beta1.ReplicaTypes {
		rs := job.Spec.ReplicaSpecFor(t)
		if rs == nil || rs.Template == nil {
			continue
		}
		sets = append(sets, kueuev1.PodSet{Name: podSetName(t), Count: rs.ReplicaCount(), Template: *rs.Template.DeepCopy()})
	}
	return sets
}

// template is the pod template of the pod set named name, or nil.
func template(job *v1beta1.MxJob, name kueuev1.PodSetReference) *corev1.PodTemplateSpec {
	for _, t := range v1beta1.ReplicaTypes {
		if podSetName(t) == name {
			if rs := job.Spec.ReplicaSpecFor(t); rs != nil {
				return rs.Template
			}
		}
	}
	return nil
}

// run unsuspends the job with what Kueue's admission assigns to each pod set (node selectors,
// tolerations, labels, scheduling gates) merged into its template. An admission that does not
// match the job's pod sets is a permanent error: retrying cannot fix it.
func run(job *v1beta1.MxJob, infos []podset.PodSetInfo) error {
	if want := len(podSets(job)); len(infos) != want {
		return podset.BadPodSetsInfoLenError(want, len(infos))
	}
	for _, info := range infos {
		t := template(job, info.Name)
		if t == nil {
			return fmt.Errorf("%w: the admission names pod set %q, which the job does not have", podset.ErrInvalidPodsetInfo, info.Name)
		}
		if err := podset.Merge(&t.ObjectMeta, &t.Spec, info); err != nil {
			return err
		}
	}
	job.Spec.RunPolicy.Suspend = ptr.To(false)
	return nil
}

// stop suspends the job and gives each template back what it held before Kueue's admission
// changed it (infos are the Workload's pod sets, copied from the templates when it was made).
// It reports whether anything changed.
func stop(job *v1beta1.MxJob, infos []podset.PodSetInfo) bool {
	changed := !job.Spec.RunPolicy.Suspended()
	job.Spec.RunPolicy.Suspend = ptr.To(true)
	for _, info := range infos {
		if t := template(job, info.Name); t != nil {
			changed = podset.RestorePodSpec(&t.ObjectMeta, &t.Spec, info) || changed
		}
	}
	return changed
}

// restoreInfos are the pod sets' original scheduling directives, kept in the Workload's spec.
func restoreInfos(wl *kueuev1.Workload) []podset.PodSetInfo {
	infos := make([]podset.PodSetInfo, len(wl.Spec.PodSets))
	for i := range wl.Spec.PodSets {
		infos[i] = podset.FromPodSet(&wl.Spec.PodSets[i])
	}
	return infos
}
