package mxjob

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// kubeflowMXJob is the part of Kubeflow's MXJob (kubeflow.org/v1, and the v1beta1 of
// mxnet-operator, which kept the run policy at the top of the spec) that the conversion reads.
type kubeflowMXJob struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            struct {
		JobMode           string                          `json:"jobMode,omitempty"`
		RunPolicy         *kubeflowRunPolicy              `json:"runPolicy,omitempty"`
		MXReplicaSpecs    map[string]*kubeflowReplicaSpec `json:"mxReplicaSpecs"`
		kubeflowRunPolicy `json:",inline"`                // v1beta1
	} `json:"spec"`
	// Status is read so that a job exported from a cluster converts; it is dropped.
	Status map[string]any `json:"status,omitempty"`
}

type kubeflowRunPolicy struct {
	CleanPodPolicy          *string         `json:"cleanPodPolicy,omitempty"`
	TTLSecondsAfterFinished *int32          `json:"ttlSecondsAfterFinished,omitempty"`
	ActiveDeadlineSeconds   *int64          `json:"activeDeadlineSeconds,omitempty"`
	BackoffLimit            *int32          `json:"backoffLimit,omitempty"`
	Suspend                 *bool           `json:"suspend,omitempty"`
	SchedulingPolicy        *map[string]any `json:"schedulingPolicy,omitempty"`
}

type kubeflowReplicaSpec struct {
	Replicas      *int32                  `json:"replicas,omitempty"`
	RestartPolicy string                  `json:"restartPolicy,omitempty"`
	Template      *corev1.PodTemplateSpec `json:"template,omitempty"`
}

// Kubeflow's replica type names and the mlkube types they become, in mlkube's order.
type kubeflowType struct {
	name string
	typ  v1beta1.ReplicaType
}

var kubeflowTypes = []kubeflowType{
	{"Scheduler", v1beta1.ReplicaTypeScheduler},
	{"Server", v1beta1.ReplicaTypeServer},
	{"Worker", v1beta1.ReplicaTypeWorker},
}

// isKubeflowMXJob says whether a document is a Kubeflow MXJob this plugin converts.
func isKubeflowMXJob(tm metav1.TypeMeta) bool {
	return tm.Kind == "MXJob" && slices.Contains([]string{"kubeflow.org/v1", "kubeflow.org/v1beta1"}, tm.APIVersion)
}

// convertKubeflow turns a Kubeflow MXJob document into an MxJob, listing each change a user
// should know of.
func convertKubeflow(doc []byte) (*v1beta1.MxJob, []string, error) {
	var kf kubeflowMXJob
	if err := yaml.UnmarshalStrict(doc, &kf); err != nil {
		return nil, nil, fmt.Errorf("reading the Kubeflow MXJob: %w", err)
	}
	changes := []string{fmt.Sprintf("apiVersion %s, kind MXJob -> %s, kind MxJob", kf.APIVersion, v1beta1.GroupVersion)}
	job := &v1beta1.MxJob{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "MxJob"},
		ObjectMeta: metav1.ObjectMeta{
			Name: kf.Metadata.Name, GenerateName: kf.Metadata.GenerateName, Namespace: kf.Metadata.Namespace,
			Labels: kf.Metadata.Labels, Annotations: kf.Metadata.Annotations,
		},
	}
	for name := range kf.Spec.MXReplicaSpecs {
		if !slices.ContainsFunc(kubeflowTypes, func(t kubeflowType) bool { return t.name == name }) {
			return nil, nil, fmt.Errorf("replica type %q has no MxJob equivalent: MXTune jobs (TunerTracker, TunerServer, Tuner) are not supported; use Scheduler, Server and Worker", name)
		}
	}
	for _, t := range kubeflowTypes {
		rs := kf.Spec.MXReplicaSpecs[t.name]
		if rs == nil {
			continue
		}
		out := v1beta1.ReplicaSpec{
			MxReplicaType: t.typ,
			Replicas:      rs.Replicas,
			RestartPolicy: v1beta1.RestartPolicy(rs.RestartPolicy),
			Template:      rs.Template,
		}
		changes = append(changes, fmt.Sprintf("spec.mxReplicaSpecs.%s -> spec.replicaSpecs[%d] (mxReplicaType %s)", t.name, len(job.Spec.ReplicaSpecs), t.typ))
		if t.typ == v1beta1.ReplicaTypeScheduler {
			// Kubeflow's operator took DMLC_PS_ROOT_PORT from this port; mlkube reads psRootPort.
			if p, ok := declaredPort(rs.Template); ok {
				out.PsRootPort = ptr.To(p)
				changes = append(changes, fmt.Sprintf("psRootPort %d from the Scheduler's %s container port %s", p, v1beta1.DefaultContainerName, v1beta1.DefaultPortName))
			}
		}
		job.Spec.ReplicaSpecs = append(job.Spec.ReplicaSpecs, out)
	}
	if len(job.Spec.ReplicaSpecs) == 0 {
		return nil, nil, fmt.Errorf("spec.mxReplicaSpecs is empty; give at least a Worker")
	}
	mode, change, err := convertMode(kf.Spec.JobMode, job.Spec.ReplicaSpecs)
	if err != nil {
		return nil, nil, err
	}
	job.Spec.JobMode = mode
	changes = append(changes, change)
	if kf.Status != nil {
		changes = append(changes, "status dropped")
	}
	rp := kf.Spec.RunPolicy
	if rp == nil {
		rp = &kf.Spec.kubeflowRunPolicy
		if *rp != (kubeflowRunPolicy{}) {
			changes = append(changes, "spec.{cleanPodPolicy,backoffLimit,activeDeadlineSeconds,ttlSecondsAfterFinished} -> spec.runPolicy")
		}
	}
	changes = append(changes, convertRunPolicy(rp, &job.Spec.RunPolicy)...)
	return job, changes, nil
}

// convertMode maps Kubeflow's MXTrain to local or dist by the replica types, as mlkube infers it.
func convertMode(kfMode string, specs []v1beta1.ReplicaSpec) (v1beta1.JobMode, string, error) {
	if kfMode != "" && kfMode != "MXTrain" {
		return "", "", fmt.Errorf("spec.jobMode %s is not supported; only MXTrain jobs convert to MxJobs", kfMode)
	}
	mode := v1beta1.InferMode(specs)
	if kfMode == "" {
		kfMode = "(unset)"
	}
	return mode, fmt.Sprintf("spec.jobMode %s -> %s", kfMode, mode), nil
}

func convertRunPolicy(in *kubeflowRunPolicy, out *v1beta1.RunPolicy) []string {
	if in.CleanPodPolicy != nil {
		out.CleanPodPolicy = v1beta1.CleanPodPolicy(*in.CleanPodPolicy)
	}
	out.BackoffLimit = in.BackoffLimit
	out.ActiveDeadlineSeconds = in.ActiveDeadlineSeconds
	out.TTLSecondsAfterFinished = in.TTLSecondsAfterFinished
	out.Suspend = in.Suspend
	if in.SchedulingPolicy != nil {
		return []string{"spec.runPolicy.schedulingPolicy dropped: MxJobs have no gang scheduling"}
	}
	return nil
}

// declaredPort is the port the mxnet container names mxjob-port.
func declaredPort(tmpl *corev1.PodTemplateSpec) (int32, bool) {
	if tmpl == nil {
		return 0, false
	}
	for _, c := range tmpl.Spec.Containers {
		if c.Name != v1beta1.DefaultContainerName {
			continue
		}
		for _, p := range c.Ports {
			if p.Name == v1beta1.DefaultPortName {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}
