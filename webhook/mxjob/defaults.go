// Package mxjob holds the admission rules of MxJobs: defaulting and validation as plain functions
// over the API types, and the thin controller-runtime adapter that serves them.
package mxjob

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// Default fills every field the design defaults. It is idempotent: defaulting a defaulted job
// changes nothing.
func Default(job *v1beta1.MxJob) {
	DefaultSpec(&job.Spec)
}

// QueuedByKueue creates a job labelled kueue.x-k8s.io/queue-name suspended, as Kueue's own
// webhooks do for the kinds Kueue knows: Kueue unsuspends it once it admits the whole job.
func QueuedByKueue(job *v1beta1.MxJob) {
	if job.Labels[labels.KueueQueueName] != "" {
		job.Spec.RunPolicy.Suspend = ptr.To(true)
	}
}

// DefaultSpec defaults a job spec; update validation uses it to ignore what defaulting adds.
func DefaultSpec(spec *v1beta1.MxJobSpec) {
	for i := range spec.ReplicaSpecs {
		defaultReplicaSpec(&spec.ReplicaSpecs[i])
	}
	if spec.JobMode == "" {
		spec.JobMode = v1beta1.InferMode(spec.ReplicaSpecs)
	}
	rp := &spec.RunPolicy
	if rp.CleanPodPolicy == "" {
		rp.CleanPodPolicy = v1beta1.DefaultCleanPodPolicy
	}
	if rp.Suspend == nil {
		rp.Suspend = ptr.To(false)
	}
	if ds := spec.Dataset; ds != nil {
		// "train/" is how kubectl etl and object lists spell a directory; the data path's
		// prefixes are directories without the slash, as a TransformRun's source.prefix. All
		// trailing slashes go at once, so that defaulting again changes nothing.
		ds.Prefix = strings.TrimRight(ds.Prefix, "/")
	}
}

func defaultReplicaSpec(rs *v1beta1.ReplicaSpec) {
	if rs.MxReplicaType == "" {
		rs.MxReplicaType = v1beta1.ReplicaTypeWorker
	}
	if rs.Replicas == nil {
		rs.Replicas = ptr.To(v1beta1.DefaultReplicas)
	}
	if rs.PsRootPort == nil {
		rs.PsRootPort = ptr.To(psRootPortDefault(rs.Template))
	}
	if rs.RestartPolicy == "" {
		rs.RestartPolicy = v1beta1.DefaultRestartPolicy
	}
	if rs.Template != nil {
		defaultPort(rs.Template.Spec.Containers, *rs.PsRootPort)
	}
}

// psRootPortDefault is the port the mxnet container declares as mxjob-port, as Kubeflow's MXJob
// reads it, so that the port a user declares is the port used; else 9091.
func psRootPortDefault(tmpl *corev1.PodTemplateSpec) int32 {
	if tmpl == nil {
		return v1beta1.DefaultPsRootPort
	}
	c, p := mxjobPort(tmpl.Spec.Containers)
	if p < 0 {
		return v1beta1.DefaultPsRootPort
	}
	return tmpl.Spec.Containers[c].Ports[p].ContainerPort
}

// defaultPort gives the mxnet container a port named mxjob-port on psRootPort, unless it
// already has a port of that name.
func defaultPort(containers []corev1.Container, port int32) {
	c, p := mxjobPort(containers)
	if c < 0 || p >= 0 {
		return
	}
	containers[c].Ports = append(containers[c].Ports, corev1.ContainerPort{
		Name:          v1beta1.DefaultPortName,
		ContainerPort: port,
		Protocol:      corev1.ProtocolTCP,
	})
}

// mxjobPort returns the index of the container named "mxnet" and that of its first port named
// "mxjob-port"; -1 for what is missing.
func mxjobPort(containers []corev1.Container) (container, port int) {
	container = mxnetIndex(containers)
	if container < 0 {
		return -1, -1
	}
	for j, p := range containers[container].Ports {
		if p.Name == v1beta1.DefaultPortName {
			return container, j
		}
	}
	return container, -1
}

// MxnetContainer returns the container named "mxnet", or nil.
func MxnetContainer(containers []corev1.Container) *corev1.Container {
	if i := mxnetIndex(containers); i >= 0 {
		return &containers[i]
	}
	return nil
}

// mxnetIndex returns the index of the container named "mxnet" (container names are unique in a
// pod), or -1.
func mxnetIndex(containers []corev1.Container) int {
	for i := range containers {
		if containers[i].Name == v1beta1.DefaultContainerName {
			return i
		}
	}
	return -1
}
