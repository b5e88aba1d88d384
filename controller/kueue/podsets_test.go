package kueue

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/podset"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
)

func TestPodSets(t *testing.T) {
	for name, tc := range map[string]struct {
		job  *v1beta1.MxJob
		want []string
	}{
		"dist":  {builders.MxJob("d").Dist(2, 3).Obj(), []string{"scheduler/1", "server/2", "worker/3"}},
		"local": {builders.MxJob("l").Local().Obj(), []string{"worker/1"}},
		// The order is the controller's start order, whatever the spec's order.
		"reordered": {builders.MxJob("r").Replica(v1beta1.ReplicaTypeWorker, 4).Replica(v1beta1.ReplicaTypeScheduler, 1).Replica(v1beta1.ReplicaTypeServer, 1).Obj(),
			[]string{"scheduler/1", "server/1", "worker/4"}},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, ps := range podSets(tc.job) {
				got = append(got, fmt.Sprintf("%s/%d", ps.Name, ps.Count))
				if ps.Template.Spec.Containers[0].Name != v1beta1.DefaultContainerName {
					t.Errorf("pod set %s lost its template", ps.Name)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("pod sets %v; want %v", got, tc.want)
			}
		})
	}
}

// admitted is what an admission of job assigns: a node selector and a toleration per pod set.
func admitted(job *v1beta1.MxJob) []podset.PodSetInfo {
	var infos []podset.PodSetInfo
	for _, ps := range podSets(job) {
		infos = append(infos, podset.PodSetInfo{
			Name: ps.Name, Count: ps.Count,
			Labels:       map[string]string{"kueue.x-k8s.io/podset": string(ps.Name)},
			NodeSelector: map[string]string{"pool": "a"},
			Tolerations:  []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpExists}},
		})
	}
	return infos
}

func TestRunThenStopGivesTheTemplatesBack(t *testing.T) {
	job := builders.MxJob("d").Dist(1, 2).RunPolicy(func(rp *v1beta1.RunPolicy) { rp.Suspend = ptr.To(true) }).Obj()
	job.Spec.ReplicaSpecs[2].Template.Spec.NodeSelector = map[string]string{"gpu": "yes"}
	wl := &kueuev1.Workload{Spec: kueuev1.WorkloadSpec{PodSets: podSets(job)}}
	original := job.DeepCopy()

	if err := run(job, admitted(job)); err != nil {
		t.Fatal(err)
	}
	if job.Spec.RunPolicy.Suspended() {
		t.Error("an admitted job stays suspended")
	}
	w := job.Spec.ReplicaSpecs[2].Template
	if w.Spec.NodeSelector["pool"] != "a" || w.Spec.NodeSelector["gpu"] != "yes" || len(w.Spec.Tolerations) != 1 || w.Labels["kueue.x-k8s.io/podset"] != "worker" {
		t.Errorf("worker template %v %v %v; want the admission merged with its own", w.Spec.NodeSelector, w.Spec.Tolerations, w.Labels)
	}

	if !stop(job, restoreInfos(wl)) {
		t.Error("stopping a running job reports no change")
	}
	for i := range job.Spec.ReplicaSpecs {
		got, want := job.Spec.ReplicaSpecs[i].Template, original.Spec.ReplicaSpecs[i].Template
		if !slices.Equal(got.Spec.Tolerations, want.Spec.Tolerations) || len(got.Spec.NodeSelector) != len(want.Spec.NodeSelector) || len(got.Labels) != len(want.Labels) {
			t.Errorf("replica %d template %+v after stop; want %+v", i, got, want)
		}
	}
	if !job.Spec.RunPolicy.Suspended() || stop(job, restoreInfos(wl)) {
		t.Error("a stopped job is not suspended, or stopping it again changes it")
	}
}

func TestRunRefusesAnAdmissionOfOtherPodSets(t *testing.T) {
	job := builders.MxJob("d").Dist(1, 2).Obj()
	for name, infos := range map[string][]podset.PodSetInfo{
		"too few":  admitted(job)[:2],
		"renamed":  append(admitted(job)[:2], podset.PodSetInfo{Name: "chief"}),
		"no infos": nil,
	} {
		t.Run(name, func(t *testing.T) {
			err := run(job.DeepCopy(), infos)
			if !podset.IsPermanent(err) || !errors.Is(err, podset.ErrInvalidPodsetInfo) {
				t.Errorf("run() = %v; want a permanent invalid pod set error", err)
			}
		})
	}
}

func TestWorkloadName(t *testing.T) {
	job := builders.MxJob("a-job-with-a-long-name-of-forty-chars-xx").Local().Obj()
	job.UID = "uid-1"
	name := workloadName(job)
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		t.Errorf("%q: %v", name, errs)
	}
	if name != workloadName(job.DeepCopy()) {
		t.Error("the name is not stable")
	}
	again := job.DeepCopy()
	again.UID = "uid-2"
	if workloadName(again) == name {
		t.Error("a job recreated under the same name gets its predecessor's Workload name")
	}
}
