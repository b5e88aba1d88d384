// Package builders makes API objects for tests in a few readable lines:
// builders.MxJob("train").Dist(2, 3).Obj().
package builders

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/restricted"
)

// DefaultImage is the image the builders put in containers.
const DefaultImage = "mlkube/mxjob-workload:dev"

// MxJobBuilder builds an MxJob.
type MxJobBuilder struct{ job v1beta1.MxJob }

// MxJob starts a job in namespace "default" with no replica specs.
func MxJob(name string) *MxJobBuilder {
	return &MxJobBuilder{job: v1beta1.MxJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "MxJob"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
	}}
}

// Namespace sets the namespace.
func (b *MxJobBuilder) Namespace(ns string) *MxJobBuilder { b.job.Namespace = ns; return b }

// Mode sets spec.jobMode.
func (b *MxJobBuilder) Mode(m v1beta1.JobMode) *MxJobBuilder { b.job.Spec.JobMode = m; return b }

// Replica appends a replica spec of the given type and count with an "mxnet" container.
func (b *MxJobBuilder) Replica(t v1beta1.ReplicaType, replicas int32) *MxJobBuilder {
	b.job.Spec.ReplicaSpecs = append(b.job.Spec.ReplicaSpecs, v1beta1.ReplicaSpec{
		MxReplicaType: t,
		Replicas:      ptr.To(replicas),
		Template:      PodTemplate(v1beta1.DefaultContainerName),
	})
	return b
}

// Local makes a local job with one worker.
func (b *MxJobBuilder) Local() *MxJobBuilder {
	return b.Mode(v1beta1.LocalMode).Replica(v1beta1.ReplicaTypeWorker, 1)
}

// Dist makes a dist job with one scheduler and the given servers and workers.
func (b *MxJobBuilder) Dist(servers, workers int32) *MxJobBuilder {
	return b.Mode(v1beta1.DistMode).
		Replica(v1beta1.ReplicaTypeScheduler, 1).
		Replica(v1beta1.ReplicaTypeServer, servers).
		Replica(v1beta1.ReplicaTypeWorker, workers)
}

// EditReplica applies f to replica spec i.
func (b *MxJobBuilder) EditReplica(i int, f func(*v1beta1.ReplicaSpec)) *MxJobBuilder {
	f(&b.job.Spec.ReplicaSpecs[i])
	return b
}

// RunPolicy applies f to spec.runPolicy.
func (b *MxJobBuilder) RunPolicy(f func(*v1beta1.RunPolicy)) *MxJobBuilder {
	f(&b.job.Spec.RunPolicy)
	return b
}

// Dataset sets spec.dataset.
func (b *MxJobBuilder) Dataset(ds v1beta1.Dataset) *MxJobBuilder { b.job.Spec.Dataset = &ds; return b }

// Obj returns a copy of the job.
func (b *MxJobBuilder) Obj() *v1beta1.MxJob { return b.job.DeepCopy() }

// PodTemplate returns a template with one container of the given name and DefaultImage.
func PodTemplate(container string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: container, Image: DefaultImage,
	}}}}
}

// TransformBuilder builds a Transform.
type TransformBuilder struct{ t v1alpha1.Transform }

// Transform starts a Transform in namespace "default" with no transformer form.
func Transform(name string) *TransformBuilder {
	return &TransformBuilder{t: v1alpha1.Transform{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Transform"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
	}}
}

// Namespace sets the namespace.
func (b *TransformBuilder) Namespace(ns string) *TransformBuilder { b.t.Namespace = ns; return b }

// Runtime describes the transformer by image and command.
func (b *TransformBuilder) Runtime(image string, command ...string) *TransformBuilder {
	b.t.Spec.Runtime = &v1alpha1.RuntimeSpec{Image: image, Command: command}
	return b
}

// PodTemplate describes the transformer by a pod template with one container "transformer".
func (b *TransformBuilder) PodTemplate(image string) *TransformBuilder {
	tmpl := PodTemplate("transformer")
	tmpl.Spec.Containers[0].Image = image
	b.t.Spec.PodTemplate = tmpl
	return b
}

// Code describes the transformer by Python source.
func (b *TransformBuilder) Code(runtime, source string) *TransformBuilder {
	b.t.Spec.Code = &v1alpha1.CodeSpec{Runtime: runtime, Source: source}
	return b
}

// Comm sets spec.communication.
func (b *TransformBuilder) Comm(c v1alpha1.Communication) *TransformBuilder {
	b.t.Spec.Communication = c
	return b
}

// Spec applies f to the spec.
func (b *TransformBuilder) Spec(f func(*v1alpha1.TransformSpec)) *TransformBuilder {
	f(&b.t.Spec)
	return b
}

// Obj returns a copy of the Transform.
func (b *TransformBuilder) Obj() *v1alpha1.Transform { return b.t.DeepCopy() }

// Env adds environment variables to the mxnet container of every replica spec.
func (b *MxJobBuilder) Env(kv ...string) *MxJobBuilder {
	for i := range b.job.Spec.ReplicaSpecs {
		b.ReplicaEnv(i, kv...)
	}
	return b
}

// ReplicaEnv adds environment variables (name, value, name, value, …) to replica spec i's
// first container.
func (b *MxJobBuilder) ReplicaEnv(i int, kv ...string) *MxJobBuilder {
	c := &b.job.Spec.ReplicaSpecs[i].Template.Spec.Containers[0]
	for j := 0; j+1 < len(kv); j += 2 {
		c.Env = append(c.Env, corev1.EnvVar{Name: kv[j], Value: kv[j+1]})
	}
	return b
}

// Queue labels the job for Kueue's LocalQueue queue.
func (b *MxJobBuilder) Queue(queue string) *MxJobBuilder {
	if b.job.Labels == nil {
		b.job.Labels = map[string]string{}
	}
	b.job.Labels[labels.KueueQueueName] = queue
	return b
}

// Priority labels the job with Kueue's WorkloadPriorityClass class.
func (b *MxJobBuilder) Priority(class string) *MxJobBuilder {
	if b.job.Labels == nil {
		b.job.Labels = map[string]string{}
	}
	b.job.Labels[labels.KueuePriorityClass] = class
	return b
}

// Restricted gives every template what the restricted Pod Security Standard asks for.
func (b *MxJobBuilder) Restricted() *MxJobBuilder {
	for i := range b.job.Spec.ReplicaSpecs {
		restricted.Default(&b.job.Spec.ReplicaSpecs[i].Template.Spec)
	}
	return b
}

// CPU requests cpu for every container of every template, what Kueue charges a queue's quota.
func (b *MxJobBuilder) CPU(cpu string) *MxJobBuilder {
	for i := range b.job.Spec.ReplicaSpecs {
		cs := b.job.Spec.ReplicaSpecs[i].Template.Spec.Containers
		for j := range cs {
			cs[j].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
	}
	return b
}
