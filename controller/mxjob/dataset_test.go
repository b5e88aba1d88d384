package mxjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/restricted"
	"github.com/mlkube/mlkube/internal/restricted/restrictedtest"
)

func TestAddDataset(t *testing.T) {
	job := defaulted(builders.MxJob("train").Namespace("team-a").Dist(1, 2).
		Dataset(v1beta1.Dataset{Prefix: "data/train", Transform: "decode>>crop", Args: "size=224"}).
		EditReplica(2, func(rs *v1beta1.ReplicaSpec) {
			rs.Template.Spec.Containers = append(rs.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "s"})
		}))
	pod := podOf(job, replica{v1beta1.ReplicaTypeWorker, 1})
	addDataset(pod, job, []string{"node-b", "node-a"})

	wantEnv := []corev1.EnvVar{
		{Name: "MLKUBE_DATAPATH_URL", Value: "http://node-agent.mlkube-datapath.svc"},
		{Name: "MLKUBE_DATAPATH_TOKEN_FILE", Value: "/var/run/secrets/mlkube.io/datapath/token"},
		{Name: "MLKUBE_NAMESPACE", Value: "team-a"},
		{Name: "MLKUBE_NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "MLKUBE_DATASET_PREFIX", Value: "data/train/"},
		{Name: "MLKUBE_DATASET_TRANSFORM", Value: "decode>>crop"},
		{Name: "MLKUBE_DATASET_ARGS", Value: "size=224"},
	}
	wantMounts := []corev1.VolumeMount{{Name: "mlkube-datapath-token", MountPath: "/var/run/secrets/mlkube.io/datapath", ReadOnly: true}}
	dmlc := len(envOf(job, replica{v1beta1.ReplicaTypeWorker, 1}))
	for _, c := range pod.Spec.Containers {
		if diff := cmp.Diff(wantEnv, c.Env[dmlc:]); diff != "" {
			t.Errorf("container %s: the env after the DMLC env (-want +got):\n%s", c.Name, diff)
		}
		if diff := cmp.Diff(wantMounts, c.VolumeMounts); diff != "" {
			t.Errorf("container %s: mounts (-want +got):\n%s", c.Name, diff)
		}
	}
	wantVolumes := []corev1.Volume{{Name: "mlkube-datapath-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: "mlkube-datapath", ExpirationSeconds: ptr.To[int64](3600), Path: "token",
		}}},
	}}}}
	if diff := cmp.Diff(wantVolumes, pod.Spec.Volumes); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	wantAffinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-a"}}}},
			{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-b"}}}},
		},
	}}}
	if diff := cmp.Diff(wantAffinity, pod.Spec.Affinity); diff != "" {
		t.Errorf("affinity (-want +got):\n%s", diff)
	}
	wantSpread := []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector:      &metav1.LabelSelector{MatchLabels: map[string]string{"mxnet.mlkube.io/job-name": "train", "mxnet.mlkube.io/replica-type": "worker"}},
		NodeAffinityPolicy: ptr.To(corev1.NodeInclusionPolicyHonor), NodeTaintsPolicy: ptr.To(corev1.NodeInclusionPolicyHonor),
	}}
	if diff := cmp.Diff(wantSpread, pod.Spec.TopologySpreadConstraints); diff != "" {
		t.Errorf("topology spread (-want +got):\n%s", diff)
	}
	for k, v := range wantSpread[0].LabelSelector.MatchLabels {
		if pod.Labels[k] != v {
			t.Errorf("the spread selects %s=%s, which the worker pod does not carry", k, v)
		}
	}
	if pod.Spec.ServiceAccountName != "default" {
		t.Errorf("serviceAccountName %q; want default spelled out, as a projected token needs it", pod.Spec.ServiceAccountName)
	}
	if len(job.Spec.ReplicaSpecs[2].Template.Spec.Volumes) != 0 || job.Spec.ReplicaSpecs[2].Template.Spec.Affinity != nil {
		t.Error("adding the dataset changed the job's template")
	}
}

func TestDatasetEnvOfATemplate(t *testing.T) {
	job := defaulted(builders.MxJob("train").Local().Dataset(v1beta1.Dataset{Template: "shard-{0..9}.tar"}))
	got := datasetEnv(job)[4:]
	want := []corev1.EnvVar{{Name: "MLKUBE_DATASET_TEMPLATE", Value: "shard-{0..9}.tar"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("dataset env (-want +got):\n%s", diff)
	}
}

// TestOnNodesKeepsTheTemplatesChoice: the template's own required terms stay, each narrowed to
// each of the agents' nodes, since terms are alternatives and a requirement added to one only
// would let the others place a worker on a node without an agent.
func TestOnNodesKeepsTheTemplatesChoice(t *testing.T) {
	gpu := corev1.NodeSelectorRequirement{Key: "gpu", Operator: corev1.NodeSelectorOpExists}
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	preferred := []corev1.PreferredSchedulingTerm{{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}
	aff := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{gpu}}, {MatchExpressions: []corev1.NodeSelectorRequirement{zone}},
		}},
		PreferredDuringSchedulingIgnoredDuringExecution: preferred,
	}}
	on := func(node string) []corev1.NodeSelectorRequirement {
		return []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}
	}
	want := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{gpu}, MatchFields: on("n1")},
			{MatchExpressions: []corev1.NodeSelectorRequirement{gpu}, MatchFields: on("n2")},
			{MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: on("n1")},
			{MatchExpressions: []corev1.NodeSelectorRequirement{zone}, MatchFields: on("n2")},
		}},
		PreferredDuringSchedulingIgnoredDuringExecution: preferred,
	}}
	if diff := cmp.Diff(want, onNodes(aff, []string{"n2", "n1"})); diff != "" {
		t.Errorf("affinity (-want +got):\n%s", diff)
	}
}

func TestOnlyWorkersReadTheDataset(t *testing.T) {
	with := defaulted(builders.MxJob("train").Dist(1, 1).Dataset(v1beta1.Dataset{Prefix: "train"}))
	without := defaulted(builders.MxJob("train").Dist(1, 1))
	for _, tc := range []struct {
		job  *v1beta1.MxJob
		r    replica
		want bool
	}{
		{with, replica{v1beta1.ReplicaTypeWorker, 0}, true},
		{with, replica{v1beta1.ReplicaTypeServer, 0}, false},
		{with, replica{v1beta1.ReplicaTypeScheduler, 0}, false},
		{without, replica{v1beta1.ReplicaTypeWorker, 0}, false},
	} {
		if got := readsDataset(tc.job, tc.r); got != tc.want {
			t.Errorf("readsDataset(dataset=%v, %s) = %v; want %v", tc.job.Spec.Dataset != nil, tc.r, got, tc.want)
		}
	}
}

// TestWorkerWithADatasetPassesRestricted: the token volume and the placement keep a restricted
// worker within the restricted Pod Security Standard, by the API server's own evaluator.
func TestWorkerWithADatasetPassesRestricted(t *testing.T) {
	job := defaulted(builders.MxJob("train").Local().Dataset(v1beta1.Dataset{Prefix: "train"}).EditReplica(0, func(rs *v1beta1.ReplicaSpec) {
		rs.Template.Spec.SecurityContext = restricted.Pod(restricted.DefaultUser)
		rs.Template.Spec.Containers[0].SecurityContext = restricted.Container()
	}))
	pod := podOf(job, replica{v1beta1.ReplicaTypeWorker, 0})
	addDataset(pod, job, []string{"n1"})
	v, err := restrictedtest.Violations(&pod.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) > 0 {
		t.Errorf("restricted refuses the worker: %v", v)
	}
}
