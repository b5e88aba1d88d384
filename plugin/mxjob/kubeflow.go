package mxjob

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/labels"
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
	CleanPodPolicy          *string                   `json:"cleanPodPolicy,omitempty"`
	TTLSecondsAfterFinished *int32                    `json:"ttlSecondsAfterFinished,omitempty"`
	ActiveDeadlineSeconds   *int64                    `json:"activeDeadlineSeconds,omitempty"`
	BackoffLimit            *int32                    `json:"backoffLimit,omitempty"`
	Suspend                 *bool                     `json:"suspend,omitempty"`
	SchedulingPolicy        *kubeflowSchedulingPolicy `json:"schedulingPolicy,omitempty"`
}

// kubeflowSchedulingPolicy is the gang scheduling policy Kubeflow passes to Volcano or the
// scheduler plugins; Kueue, which queues MxJobs, takes its queue and priority.
type kubeflowSchedulingPolicy struct {
	MinAvailable           *int32              `json:"minAvailable,omitempty"`
	Queue                  string              `json:"queue,omitempty"`
	MinResources           corev1.ResourceList `json:"minResources,omitempty"`
	PriorityClass          string              `json:"priorityClass,omitempty"`
	ScheduleTimeoutSeconds *int32              `json:"scheduleTimeoutSeconds,omitempty"`
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
	policies, err := convertPolicies(&kf, job)
	if err != nil {
		return nil, nil, err
	}
	return job, append(changes, policies...), nil
}

// convertPolicies maps the run policy, at spec.runPolicy or (v1beta1) on the spec itself, and
// its scheduling policy.
func convertPolicies(kf *kubeflowMXJob, job *v1beta1.MxJob) ([]string, error) {
	var changes []string
	rp, path := kf.Spec.RunPolicy, "spec.runPolicy"
	if rp == nil {
		rp, path = &kf.Spec.kubeflowRunPolicy, "spec"
		moved := *rp
		moved.SchedulingPolicy = nil // not moved but mapped, below
		if moved != (kubeflowRunPolicy{}) {
			changes = append(changes, "spec.{cleanPodPolicy,backoffLimit,activeDeadlineSeconds,ttlSecondsAfterFinished} -> spec.runPolicy")
		}
	}
	convertRunPolicy(rp, &job.Spec.RunPolicy)
	scheduling, err := convertSchedulingPolicy(rp.SchedulingPolicy, path+".schedulingPolicy", job)
	return append(changes, scheduling...), err
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

func convertRunPolicy(in *kubeflowRunPolicy, out *v1beta1.RunPolicy) {
	if in.CleanPodPolicy != nil {
		out.CleanPodPolicy = v1beta1.CleanPodPolicy(*in.CleanPodPolicy)
	}
	out.BackoffLimit = in.BackoffLimit
	out.ActiveDeadlineSeconds = in.ActiveDeadlineSeconds
	out.TTLSecondsAfterFinished = in.TTLSecondsAfterFinished
	out.Suspend = in.Suspend
}

// convertSchedulingPolicy maps the gang scheduling policy at path onto what Kueue, which admits
// all of a queued MxJob's pods at once, reads: the queue becomes the job's LocalQueue and the
// PriorityClass its templates' (Kueue takes a Workload's priority from it). The rest is dropped,
// each field named.
func convertSchedulingPolicy(sp *kubeflowSchedulingPolicy, path string, job *v1beta1.MxJob) ([]string, error) {
	if sp == nil {
		return nil, nil
	}
	var changes []string
	if sp.Queue != "" {
		change, err := convertQueue(sp.Queue, path+".queue", job)
		if err != nil {
			return nil, err
		}
		changes = append(changes, change)
	}
	if sp.PriorityClass != "" {
		changes = append(changes, convertPriorityClass(sp.PriorityClass, path+".priorityClass", job.Spec.ReplicaSpecs))
	}
	for _, d := range []struct {
		field string
		set   bool
		why   string
	}{
		{"minAvailable", sp.MinAvailable != nil, "an MxJob needs all of its pods, and Kueue admits a queued job's pods together"},
		{"minResources", sp.MinResources != nil, "Kueue charges a queued job the requests of all of its pods"},
		{"scheduleTimeoutSeconds", sp.ScheduleTimeoutSeconds != nil, "a queued job waits in its LocalQueue until Kueue admits it"},
	} {
		if d.set {
			changes = append(changes, fmt.Sprintf("%s.%s dropped: %s", path, d.field, d.why))
		}
	}
	return changes, nil
}

// convertQueue labels the job with the queue at path as its LocalQueue, unless the Kubeflow job
// is labelled with one already (Kueue queues Kubeflow MXJobs by that label too).
func convertQueue(queue, path string, job *v1beta1.MxJob) (string, error) {
	if q := job.Labels[labels.KueueQueueName]; q != "" {
		return fmt.Sprintf("%s %s dropped: the job's label %s names LocalQueue %s", path, queue, labels.KueueQueueName, q), nil
	}
	if err := checkKueueName(path, queue, localQueueHint); err != nil {
		return "", err
	}
	if job.Labels == nil {
		job.Labels = map[string]string{}
	}
	job.Labels[labels.KueueQueueName] = queue
	return fmt.Sprintf("%s %s -> label %s (the LocalQueue Kueue admits the job from)", path, queue, labels.KueueQueueName), nil
}

// convertPriorityClass gives the PriorityClass at path to every template that names none: the
// pods run with it, and Kueue ranks the job by it.
func convertPriorityClass(class, path string, specs []v1beta1.ReplicaSpec) string {
	var set, kept []string
	for i := range specs {
		rs := &specs[i]
		switch {
		case rs.Template == nil:
		case rs.Template.Spec.PriorityClassName == "":
			rs.Template.Spec.PriorityClassName = class
			set = append(set, string(rs.MxReplicaType))
		default:
			kept = append(kept, fmt.Sprintf("%s keeps %s", rs.MxReplicaType, rs.Template.Spec.PriorityClassName))
		}
	}
	msg := fmt.Sprintf("%s %s -> spec.priorityClassName of the %s templates", path, class, strings.Join(set, ", "))
	if len(set) == 0 {
		msg = fmt.Sprintf("%s %s dropped: every template names its own priorityClassName", path, class)
	}
	if len(kept) > 0 {
		msg += " (" + strings.Join(kept, ", ") + ")"
	}
	return msg
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
