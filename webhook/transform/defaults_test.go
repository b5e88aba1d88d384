package transform

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestDefault(t *testing.T) {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromString("default")}}}
	defaultPort := corev1.ContainerPort{Name: "default", ContainerPort: 8000, Protocol: corev1.ProtocolTCP}
	common := func(s v1alpha1.TransformSpec) v1alpha1.TransformSpec {
		s.Communication = v1alpha1.CommHPush
		s.InitTimeout = &metav1.Duration{Duration: 45 * time.Second}
		s.ObjectTimeout = &metav1.Duration{Duration: 10 * time.Second}
		s.FailurePolicy = v1alpha1.FailureAbort
		return s
	}
	pod := func(ports ...corev1.ContainerPort) *corev1.PodTemplateSpec {
		return &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "t", Image: "i", Ports: ports}}}}
	}
	withProbe := func(p *corev1.PodTemplateSpec) *corev1.PodTemplateSpec {
		p.Spec.Containers[0].ReadinessProbe = probe
		return p
	}
	cases := map[string]struct {
		spec v1alpha1.TransformSpec
		want v1alpha1.TransformSpec
	}{
		"runtime form gets the common defaults": {
			spec: v1alpha1.TransformSpec{Runtime: &v1alpha1.RuntimeSpec{Image: "i"}},
			want: common(v1alpha1.TransformSpec{Runtime: &v1alpha1.RuntimeSpec{Image: "i"}}),
		},
		"scheme spelling is normalised": {
			spec: v1alpha1.TransformSpec{Communication: "ws://"},
			want: func() v1alpha1.TransformSpec {
				s := common(v1alpha1.TransformSpec{})
				s.Communication = v1alpha1.CommWS
				return s
			}(),
		},
		"explicit values are kept": {
			spec: v1alpha1.TransformSpec{Communication: v1alpha1.CommIO, IOMode: v1alpha1.IOPersistent, FailurePolicy: v1alpha1.FailureRestart,
				InitTimeout: &metav1.Duration{Duration: time.Minute}, ObjectTimeout: &metav1.Duration{Duration: time.Second}},
			want: v1alpha1.TransformSpec{Communication: v1alpha1.CommIO, IOMode: v1alpha1.IOPersistent, FailurePolicy: v1alpha1.FailureRestart,
				InitTimeout: &metav1.Duration{Duration: time.Minute}, ObjectTimeout: &metav1.Duration{Duration: time.Second}},
		},
		"io runs its command per object by default": {
			spec: v1alpha1.TransformSpec{Communication: "io://"},
			want: func() v1alpha1.TransformSpec {
				s := common(v1alpha1.TransformSpec{})
				s.Communication, s.IOMode = v1alpha1.CommIO, v1alpha1.IOPerObject
				return s
			}(),
		},
		"code gets the default function": {
			spec: v1alpha1.TransformSpec{Code: &v1alpha1.CodeSpec{Runtime: "python3.11", Source: "x"}},
			want: common(v1alpha1.TransformSpec{Code: &v1alpha1.CodeSpec{Runtime: "python3.11", Source: "x", Function: "transform"}}),
		},
		"podTemplate gets a default port and probe": {
			spec: v1alpha1.TransformSpec{PodTemplate: pod()},
			want: common(v1alpha1.TransformSpec{PodTemplate: withProbe(pod(defaultPort))}),
		},
		"an unnamed port 8000 is named default": {
			spec: v1alpha1.TransformSpec{PodTemplate: pod(corev1.ContainerPort{ContainerPort: 8000})},
			want: common(v1alpha1.TransformSpec{PodTemplate: withProbe(pod(corev1.ContainerPort{Name: "default", ContainerPort: 8000}))}),
		},
		"an existing default port and probe are kept": {
			spec: v1alpha1.TransformSpec{PodTemplate: func() *corev1.PodTemplateSpec {
				p := pod(corev1.ContainerPort{Name: "default", ContainerPort: 9000})
				p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 3}
				return p
			}()},
			want: common(v1alpha1.TransformSpec{PodTemplate: func() *corev1.PodTemplateSpec {
				p := pod(corev1.ContainerPort{Name: "default", ContainerPort: 9000})
				p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{PeriodSeconds: 3}
				return p
			}()}),
		},
		"a podTemplate with two containers is left to validation": {
			spec: v1alpha1.TransformSpec{PodTemplate: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}},
			want: common(v1alpha1.TransformSpec{PodTemplate: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}}),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tr := &v1alpha1.Transform{Spec: tc.spec}
			Default(tr)
			if diff := cmp.Diff(tc.want, tr.Spec); diff != "" {
				t.Errorf("Default() (-want +got):\n%s", diff)
			}
			again := tr.DeepCopy()
			Default(again)
			if diff := cmp.Diff(tr, again); diff != "" {
				t.Errorf("Default() is not idempotent (-once +twice):\n%s", diff)
			}
		})
	}
}
