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

// Default fills, in spec, what the restricted Pod Security Standard asks for and spec leaves
// unset: at pod level runAsNonRoot, the RuntimeDefault seccomp profile and, when neither the pod
// nor any container names a user, DefaultUser as user and (unless one is named) group; on every container, init containers
// included, no privilege escalation and, when capabilities are unset, dropping ALL; and no
// ServiceAccount token unless the spec asks for one. It fills only nil fields: a value the user
// set stays, so one that is wrong (runAsUser: 0) is refused where it was written, not silently
// changed.
func Default(spec *corev1.PodSpec) {
	if spec.AutomountServiceAccountToken == nil {
		spec.AutomountServiceAccountToken = ptr.To(false)
	}
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return // the standard's Linux fields are invalid in a Windows pod
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	psc := spec.SecurityContext
	if psc.RunAsNonRoot == nil {
		psc.RunAsNonRoot = ptr.To(true)
	}
	if psc.SeccompProfile == nil {
		psc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	// The kubelet refuses runAsNonRoot for an image whose user is root unless a non-root uid is
	// named. A user named anywhere is the template's choice, and so is the group that goes with
	// it: both are kept.
	if psc.RunAsUser == nil && !anyContainer(spec, func(sc *corev1.SecurityContext) bool { return sc.RunAsUser != nil }) {
		psc.RunAsUser = ptr.To(DefaultUser)
		if psc.RunAsGroup == nil && !anyContainer(spec, func(sc *corev1.SecurityContext) bool { return sc.RunAsGroup != nil }) {
			psc.RunAsGroup = ptr.To(DefaultUser)
		}
	}
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			defaultContainer(&list[i])
		}
	}
}

func defaultContainer(c *corev1.Container) {
	if c.SecurityContext == nil {
		c.SecurityContext = &corev1.SecurityContext{}
	}
	sc := c.SecurityContext
	if sc.AllowPrivilegeEscalation == nil {
		sc.AllowPrivilegeEscalation = ptr.To(false)
	}
	if sc.Capabilities == nil {
		sc.Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	}
}

// anyContainer reports whether f holds for the security context of a container of spec.
func anyContainer(spec *corev1.PodSpec, f func(*corev1.SecurityContext) bool) bool {
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			if sc := list[i].SecurityContext; sc != nil && f(sc) {
				return true
			}
		}
	}
	return false
}
