package cluster_test

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/internal/images"
)

var echoLabels = map[string]string{"app": "echo"}

// echoDaemonSet runs the test server on every node; it reports its pod and node names.
func echoDaemonSet(ns string) *appsv1.DaemonSet {
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: echoLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: echoLabels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{
						Name:            "echo",
						Image:           images.TestServer.Ref,
						ImagePullPolicy: corev1.PullIfNotPresent, // loaded, never pulled
						Env:             []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("NODE_NAME", "spec.nodeName")},
						Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
							HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")},
						}},
					}},
				},
			},
		},
	}
}

// echoService fronts the DaemonSet with the given internal traffic policy.
func echoService(ns, name string, policy corev1.ServiceInternalTrafficPolicy) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector:              echoLabels,
			InternalTrafficPolicy: &policy,
			Ports:                 []corev1.ServicePort{{Port: 8080, TargetPort: intstr.FromString("http")}},
		},
	}
}
