// Package podspec builds the transformer pod a Transform runs on a node. It is a package of its
// own, apart from the Transform controller, so that the Transform webhook judges exactly the pod
// the controller will create (its Pod Security) without linking the reconciler.
package podspec

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/restricted"
)

const (
	containerName      = "transformer"
	dataRootVolumeName = "mlkube-data"
)

// Names mlkube gives what it adds to a transformer pod, which templates may not use: the webhook
// refuses them, so that a template can neither mount mlkube's volumes nor shadow what it adds.
const (
	// ReservedPrefix begins the names of the volumes mlkube adds (mlkube-data, mlkube-bin, …).
	ReservedPrefix = "mlkube-"
	// ReservedEnvPrefix begins the names of the variables mlkube sets (wire.EnvNode, …).
	ReservedEnvPrefix = "MLKUBE_"
	// IOShimInitName is the io shim's init container.
	IOShimInitName = "io-shim-install"
	// DataDriver is the CSI driver that serves fqn's data root; templates may not name it.
	DataDriver = wire.DataDriver
)

// Labels select the transformer pods of t, on every node.
func Labels(t *v1alpha1.Transform) map[string]string {
	return map[string]string{
		labels.ManagedBy:   labels.ManagedByValue,
		v1alpha1.LabelName: t.Name,
		labels.Name:        "etl",
		labels.Component:   "transformer",
	}
}

func podLabels(t *v1alpha1.Transform, node string) map[string]string {
	l := Labels(t)
	l[v1alpha1.LabelNode] = node
	if len(node) > 63 {
		l[v1alpha1.LabelNode] = v1alpha1.NodeHash(node) // a label value is at most 63 characters
	}
	return l
}

// ControlledBy makes t the controller of what it runs, so that garbage collection deletes them
// with it.
func ControlledBy(t *v1alpha1.Transform) []metav1.OwnerReference {
	return []metav1.OwnerReference{*metav1.NewControllerRef(t, v1alpha1.GroupVersion.WithKind("Transform"))}
}

// Build makes the transformer pod for node from the Transform's form, pinned to the node; the io
// shim and the code runtimes run from images. The pod passes the restricted Pod Security Standard
// unless the template sets a field it forbids: fqn's data root too, a csi volume.
func Build(t *v1alpha1.Transform, node string, images wire.PodImages) *corev1.Pod {
	spec := basePodSpec(t, images)
	c := &spec.Containers[0]
	c.Env = append(c.Env, t.Spec.Env...)
	c.Env = append(c.Env,
		corev1.EnvVar{Name: wire.EnvPort, Value: strconv.Itoa(int(ContainerPort(c)))},
		corev1.EnvVar{Name: wire.EnvNode, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}})
	if t.Spec.Communication == v1alpha1.CommIO {
		wrapWithIOShim(spec, images.IOShim, t.Spec.IOMode == v1alpha1.IOPersistent)
	}
	if t.Spec.Argument == v1alpha1.ArgFQN {
		mountDataRoot(spec)
	}
	// A transformer that exits is a failure the controller handles (Abort or Restart with
	// backoff); the kubelet must not hide it by restarting the container in place.
	spec.RestartPolicy = corev1.RestartPolicyNever
	spec.Tolerations = append(spec.Tolerations, t.Spec.Tolerations...)
	spec.Affinity = pinTo(node)
	// What the template leaves unset gets the restricted Pod Security Standard's values, the io
	// shim's init container too, so the pod runs in a namespace enforcing restricted.
	restricted.Default(spec)
	// The controller's own labels and annotations are copied last, so they win over the user's:
	// the controller finds its pods and their nodes by them.
	lbls, annotations := map[string]string{}, map[string]string{}
	if t.Spec.PodTemplate != nil {
		maps.Copy(lbls, t.Spec.PodTemplate.Labels)
		maps.Copy(annotations, t.Spec.PodTemplate.Annotations)
	}
	maps.Copy(lbls, podLabels(t, node))
	annotations[v1alpha1.LabelNode] = node
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            v1alpha1.TransformerPodName(t.Name, node),
			Namespace:       t.Namespace,
			Labels:          lbls,
			Annotations:     annotations,
			OwnerReferences: ControlledBy(t),
		},
		Spec: *spec,
	}
}

// basePodSpec renders the Transform's form into a pod spec with one transformer container; a code
// form runs its runtime's image of images.
func basePodSpec(t *v1alpha1.Transform, images wire.PodImages) *corev1.PodSpec {
	if t.Spec.PodTemplate != nil {
		spec := t.Spec.PodTemplate.Spec.DeepCopy()
		return spec
	}
	c := corev1.Container{
		Name:  containerName,
		Ports: []corev1.ContainerPort{{Name: v1alpha1.DefaultPortName, ContainerPort: v1alpha1.DefaultPort, Protocol: corev1.ProtocolTCP}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: wire.PathHealth, Port: intstr.FromString(v1alpha1.DefaultPortName)}},
			PeriodSeconds: 1,
		},
		ImagePullPolicy: corev1.PullIfNotPresent,
	}
	switch {
	case t.Spec.Runtime != nil:
		rt := t.Spec.Runtime
		c.Image, c.Command, c.Args, c.Resources = rt.Image, rt.Command, rt.Args, rt.Resources
		c.Env = append(c.Env, rt.Env...)
	case t.Spec.Code != nil:
		code := t.Spec.Code
		// The webhook admits only supported runtimes; should one slip through, the empty image
		// fails the pod's creation with a message naming the field.
		c.Image, _ = images.CodeRuntime(code.Runtime)
		c.Env = append(c.Env,
			corev1.EnvVar{Name: wire.EnvCodeSource, Value: code.Source},
			corev1.EnvVar{Name: wire.EnvCodeFunction, Value: code.Function},
			corev1.EnvVar{Name: wire.EnvCodeDependencies, Value: code.Dependencies},
			corev1.EnvVar{Name: wire.EnvCodeChunkSize, Value: strconv.FormatInt(code.ChunkSize, 10)})
	}
	return &corev1.PodSpec{Containers: []corev1.Container{c}}
}

// wrapWithIOShim injects the io shim: an init container of image copies it into a shared volume,
// and the transformer's command runs under it, once per object or, if persistent, once per
// worker.
func wrapWithIOShim(spec *corev1.PodSpec, image string, persistent bool) {
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: wire.IOShimVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	mount := corev1.VolumeMount{Name: wire.IOShimVolume, MountPath: wire.IOShimMountPath}
	spec.InitContainers = append(spec.InitContainers, corev1.Container{
		Name: IOShimInitName, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
		Command:      wire.IOShimInstallCommand(),
		VolumeMounts: []corev1.VolumeMount{mount},
	})
	c := &spec.Containers[0]
	c.Command = wire.IOShimCommand(persistent, append(c.Command, c.Args...)...)
	c.Args = nil
	c.VolumeMounts = append(c.VolumeMounts, mount)
}

// mountDataRoot gives an fqn transformer its namespace's directory of the node, read-only, at
// wire.DataRoot, the path the agent sends: an inline volume of the data.mlkube.io CSI driver, which
// the node agents' DaemonSet serves. The driver takes the namespace from the kubelet (the pod's
// own) and mounts only for the pod this function built for an fqn Transform; a hostPath would
// keep the pod out of any namespace that enforces the baseline or restricted Pod Security
// Standard.
func mountDataRoot(spec *corev1.PodSpec) {
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: dataRootVolumeName, VolumeSource: corev1.VolumeSource{
		CSI: &corev1.CSIVolumeSource{Driver: wire.DataDriver, ReadOnly: ptr.To(true)}}})
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: dataRootVolumeName, MountPath: wire.DataRoot, ReadOnly: true})
	c.Env = append(c.Env, corev1.EnvVar{Name: wire.EnvFQNRoot, Value: wire.DataRoot})
}

// pinTo requires the node, as AIStore pins each ETL pod to its target's node.
func pinTo(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}}
}

// ContainerPort is the transformer's port named "default".
func ContainerPort(c *corev1.Container) int32 {
	if p := v1alpha1.TransformerPort(c.Ports); p != nil {
		return p.ContainerPort
	}
	return v1alpha1.DefaultPort
}

// Port is the port t's transformer listens on: the container port its pods are given and
// announce to the transformer (wire.EnvPort).
func Port(t *v1alpha1.Transform) int32 {
	// The port is the form's, whichever images run it.
	return ContainerPort(&basePodSpec(t, wire.PodImages{}).Containers[0])
}
