package mxjob

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/wire"
)

// tokenExpirationSeconds is the lifetime of the workers' data path token; the kubelet renews the
// file at 80% of it, and readers read the file again (docs/datapath-rbac.md).
const tokenExpirationSeconds = 3600

// defaultServiceAccount is the ServiceAccount of a pod that names none.
const defaultServiceAccount = "default"

// readsDataset reports whether replica r of job reads the job's dataset: its workers do; the
// scheduler and the servers exchange parameters only, so they get no data path token.
func readsDataset(job *v1beta1.MxJob, r replica) bool {
	return job.Spec.Dataset != nil && r.Type == v1beta1.ReplicaTypeWorker
}

// addDataset gives a worker pod what reading the job's dataset through its own node's agent
// takes: a projected token of the data path audience, mounted read-only in every container, the
// environment that names the agent, the token, the namespace, the node and the dataset
// (api/wire/podenv.go), and a placement on the nodes whose agent is ready, spread one worker per
// node before any node gets a second (docs/design/mxjob.md, "Dataset").
func addDataset(pod *corev1.Pod, job *v1beta1.MxJob, nodes []string) {
	spec := &pod.Spec
	if spec.ServiceAccountName == "" {
		// What the API server's ServiceAccount admission would fill in, spelled out: a projected
		// token needs a named ServiceAccount, and the pod's identity on the data path is this one.
		spec.ServiceAccountName = defaultServiceAccount
	}
	spec.Volumes = append(spec.Volumes, tokenVolume())
	env := datasetEnv(job)
	mount := corev1.VolumeMount{Name: v1beta1.DatasetTokenVolume, MountPath: wire.TokenDir, ReadOnly: true}
	for i := range spec.Containers {
		spec.Containers[i].Env = append(spec.Containers[i].Env, env...)
		spec.Containers[i].VolumeMounts = append(spec.Containers[i].VolumeMounts, mount)
	}
	spec.Affinity = onNodes(spec.Affinity, nodes)
	spec.TopologySpreadConstraints = append(spec.TopologySpreadConstraints, workerSpread(job.Name))
}

// tokenVolume is a projected ServiceAccount token for the data path's audience: the agent
// refuses the pod's API server token, and the API server refuses this one.
func tokenVolume() corev1.Volume {
	return corev1.Volume{Name: v1beta1.DatasetTokenVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: wire.Audience, ExpirationSeconds: ptr.To[int64](tokenExpirationSeconds), Path: "token",
		}}},
	}}}
}

// datasetEnv is the environment a client in a worker reads. The prefix is spelled as a list
// prefix, with its slash, so that listing it names the directory's objects and no sibling's
// ("train/" and not "training").
func datasetEnv(job *v1beta1.MxJob) []corev1.EnvVar {
	ds := job.Spec.Dataset
	env := []corev1.EnvVar{
		{Name: wire.EnvDatapathURL, Value: wire.AgentServiceURL},
		{Name: wire.EnvDatapathTokenFile, Value: wire.TokenFile},
		{Name: wire.EnvNamespace, Value: job.Namespace},
		{Name: wire.EnvNodeName, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
	}
	for _, kv := range []struct{ name, value string }{
		{wire.EnvDatasetPrefix, dirPrefix(ds.Prefix)},
		{wire.EnvDatasetTemplate, ds.Template},
		{wire.EnvDatasetTransform, ds.Transform},
		{wire.EnvDatasetArgs, ds.Args},
	} {
		if kv.value != "" {
			env = append(env, corev1.EnvVar{Name: kv.name, Value: kv.value})
		}
	}
	return env
}

func dirPrefix(dir string) string {
	if dir == "" {
		return ""
	}
	return dir + "/"
}

// onNodes narrows a pod's affinity to the given nodes. The API server allows one value per
// metadata.name field requirement, so each node is a term of its own; terms are ORed, so each of
// the template's own required terms is repeated once per node, with that node's requirement
// ANDed in. The terms grow as the template's terms times the agents' nodes.
func onNodes(aff *corev1.Affinity, nodes []string) *corev1.Affinity {
	if aff == nil {
		aff = &corev1.Affinity{}
	}
	if aff.NodeAffinity == nil {
		aff.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := aff.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	own := na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(own) == 0 {
		own = []corev1.NodeSelectorTerm{{}}
	}
	var terms []corev1.NodeSelectorTerm
	for _, term := range own {
		for _, node := range slices.Sorted(slices.Values(nodes)) {
			t := *term.DeepCopy()
			t.MatchFields = append(t.MatchFields, corev1.NodeSelectorRequirement{
				Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}})
			terms = append(terms, t)
		}
	}
	na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = terms
	return aff
}

// workerSpread spreads a job's workers over nodes with a skew of at most one. With the node
// affinity above honoured, only the nodes with a ready agent count as domains, so while workers
// are no more than those nodes each lands on a node of its own; tainted nodes the workers do not
// tolerate do not count either. DoNotSchedule: a worker that would double up on a node while
// another node has none waits rather than reading its share over the network.
func workerSpread(job string) corev1.TopologySpreadConstraint {
	return corev1.TopologySpreadConstraint{
		MaxSkew:           1,
		TopologyKey:       corev1.LabelHostname,
		WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			v1beta1.LabelJobName: job, v1beta1.LabelReplicaType: v1beta1.ReplicaTypeWorker.Role(),
		}},
		NodeAffinityPolicy: ptr.To(corev1.NodeInclusionPolicyHonor),
		NodeTaintsPolicy:   ptr.To(corev1.NodeInclusionPolicyHonor),
	}
}
