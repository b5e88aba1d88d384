// Package transform holds the admission rules of Transforms: defaulting and validation as plain
// functions over the API types, and the thin controller-runtime adapter that serves them.
package transform

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// Default fills every field the design defaults. It is idempotent.
func Default(t *v1alpha1.Transform) {
	DefaultSpec(&t.Spec)
}

// DefaultSpec defaults a Transform spec; update validation uses it to ignore what defaulting adds.
func DefaultSpec(spec *v1alpha1.TransformSpec) {
	// AIStore users write "hpush://"; store the plain name.
	spec.Communication = v1alpha1.Communication(strings.TrimSuffix(string(spec.Communication), "://"))
	if spec.Communication == "" {
		spec.Communication = v1alpha1.DefaultCommunication
	}
	if spec.Communication == v1alpha1.CommIO && spec.IOMode == "" {
		spec.IOMode = v1alpha1.IOPerObject
	}
	if spec.InitTimeout == nil {
		spec.InitTimeout = &metav1.Duration{Duration: v1alpha1.DefaultInitTimeout}
	}
	if spec.ObjectTimeout == nil {
		spec.ObjectTimeout = &metav1.Duration{Duration: v1alpha1.DefaultObjectTimeout}
	}
	if spec.FailurePolicy == "" {
		spec.FailurePolicy = v1alpha1.DefaultFailurePolicy
	}
	if spec.Code != nil && spec.Code.Function == "" {
		spec.Code.Function = v1alpha1.DefaultFunction
	}
	if spec.PodTemplate != nil && len(spec.PodTemplate.Spec.Containers) == 1 {
		defaultTransformerContainer(&spec.PodTemplate.Spec.Containers[0])
	}
}

// defaultTransformerContainer gives a pod template's container the port named "default" the
// agent talks to, and a readiness probe on GET /health there.
func defaultTransformerContainer(c *corev1.Container) {
	if v1alpha1.TransformerPort(c.Ports) == nil {
		named := false
		for i := range c.Ports {
			if c.Ports[i].Name == "" && c.Ports[i].ContainerPort == v1alpha1.DefaultPort {
				c.Ports[i].Name, named = v1alpha1.DefaultPortName, true
				break
			}
		}
		if !named {
			c.Ports = append(c.Ports, corev1.ContainerPort{
				Name: v1alpha1.DefaultPortName, ContainerPort: v1alpha1.DefaultPort, Protocol: corev1.ProtocolTCP,
			})
		}
	}
	if c.ReadinessProbe == nil {
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: wire.PathHealth, Port: intstr.FromString(v1alpha1.DefaultPortName),
		}}}
	}
}
