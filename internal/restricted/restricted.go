// Package restricted writes the security settings that let a pod pass the restricted Pod
// Security Standard, the level the namespaces of a shared cluster enforce: non-root, no
// privilege escalation, no capabilities, the runtime's default seccomp profile. Pods mlkube
// writes for its users carry them, so that nothing mlkube generates is refused there.
package restricted

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// DefaultUser is the uid mlkube runs user pods as when nothing else is said: the images'
// conventional non-root user. The kubelet refuses runAsNonRoot for an image whose user is root
// unless the pod names a non-root uid, so one is always given.
const DefaultUser int64 = 65532

// Pod is the pod-level part, running every container as uid (and its group).
func Pod(uid int64) *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To(uid),
		RunAsGroup:     ptr.To(uid),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// Container is the container-level part, which the standard checks on every container.
func Container() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}
