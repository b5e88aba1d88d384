package podsecurity

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/policy"
)

// attribution says where a check's failure is and what to do about it.
type attribution struct {
	hint string
	// pod names the fields of a failure of the pod-level spec (podLevel, without containers);
	// fails evaluates the check on a pod-level spec. Nil, or no path: base itself.
	pod func(base *field.Path, podLevel *corev1.PodSpec, fails func(*corev1.PodSpec) bool) []*field.Path
	// container narrows a failure of container c, at p, to its field. Nil: p itself.
	container func(p *field.Path, c *corev1.Container) *field.Path
}

const (
	rootHint = "an image that needs root cannot run as a transformer"
	capsHint = "drop ALL (only NET_BIND_SERVICE may be added), or leave capabilities unset and mlkube drops ALL"
)

// attributions are keyed by upstream's check IDs. A check missing here (one added upstream) is
// still refused, at the container or the spec; a test fails on policy.DefaultChecks() holding an
// ID this table lacks, so an upgrade shows up in review.
var attributions = map[policy.CheckID]attribution{
	"hostNamespaces":          {hint: "transformers reach the node agent on the pod network; remove it", pod: hostNamespaces},
	"privileged":              {hint: "a transformer needs no privilege; remove it", container: securityContext("privileged")},
	"capabilities_baseline":   {hint: capsHint, container: securityContext("capabilities")},
	"capabilities_restricted": {hint: capsHint, container: securityContext("capabilities")},
	"hostPathVolumes":         {hint: volumesHint, pod: volumes},
	"restrictedVolumes":       {hint: volumesHint, pod: volumes},
	"hostPorts":               {hint: "the node agent reaches the transformer on its pod IP; remove it", container: hostPorts},
	"allowPrivilegeEscalation": {hint: "set it to false, or leave it unset and mlkube sets false",
		container: securityContext("allowPrivilegeEscalation")},
	"runAsNonRoot": {hint: "set it to true, or leave it unset and mlkube sets true; " + rootHint,
		pod: podSecurityContext("runAsNonRoot"), container: securityContext("runAsNonRoot")},
	"runAsUser": {hint: "name a non-zero uid, or leave it unset and mlkube runs the pod as 65532; " + rootHint,
		pod: podSecurityContext("runAsUser"), container: securityContext("runAsUser")},
	"seccompProfile_baseline":   {hint: seccompHint, pod: podSecurityContext("seccompProfile"), container: securityContext("seccompProfile")},
	"seccompProfile_restricted": {hint: seccompHint, pod: podSecurityContext("seccompProfile"), container: securityContext("seccompProfile")},
	"seLinuxOptions": {hint: "remove the SELinux user and role, and use a container_t, container_init_t or container_kvm_t type",
		pod: podSecurityContext("seLinuxOptions"), container: securityContext("seLinuxOptions")},
	"procMount":                  {hint: "remove it: only the Default proc mount is allowed", container: securityContext("procMount")},
	"procMount_restricted":       {hint: "remove it: only the Default proc mount is allowed", container: securityContext("procMount")},
	"sysctls":                    {hint: "only the safe sysctls are allowed", pod: sysctls},
	"appArmorProfile":            {hint: "use RuntimeDefault or Localhost", pod: appArmor, container: securityContext("appArmorProfile")},
	"windowsHostProcess":         {hint: "remove it", pod: podSecurityContext("windowsOptions", "hostProcess"), container: securityContext("windowsOptions", "hostProcess")},
	"hostProbesAndHostLifecycle": {hint: "leave host unset: probes and hooks reach the pod's own IP", container: hostProbes},
}

const (
	volumesHint = "use an emptyDir, configMap, secret, projected, downwardAPI, ephemeral or persistentVolumeClaim volume; fqn data comes from mlkube's own volume"
	seccompHint = "use RuntimeDefault or Localhost, or leave it unset and mlkube sets RuntimeDefault"
)

func podSecurityContext(names ...string) func(*field.Path, *corev1.PodSpec, func(*corev1.PodSpec) bool) []*field.Path {
	return func(base *field.Path, _ *corev1.PodSpec, _ func(*corev1.PodSpec) bool) []*field.Path {
		return []*field.Path{base.Child("securityContext", names...)}
	}
}

func securityContext(names ...string) func(*field.Path, *corev1.Container) *field.Path {
	return func(p *field.Path, _ *corev1.Container) *field.Path { return p.Child("securityContext", names...) }
}

func hostNamespaces(base *field.Path, spec *corev1.PodSpec, _ func(*corev1.PodSpec) bool) []*field.Path {
	var paths []*field.Path
	for _, ns := range []struct {
		name string
		set  bool
	}{{"hostNetwork", spec.HostNetwork}, {"hostPID", spec.HostPID}, {"hostIPC", spec.HostIPC}} {
		if ns.set {
			paths = append(paths, base.Child(ns.name))
		}
	}
	return paths
}

// volumes names each volume that fails the check on its own.
func volumes(base *field.Path, spec *corev1.PodSpec, fails func(*corev1.PodSpec) bool) []*field.Path {
	var paths []*field.Path
	for j, v := range spec.Volumes {
		one := spec.DeepCopy()
		one.Volumes = []corev1.Volume{v}
		if fails(one) {
			paths = append(paths, base.Child("volumes").Index(j))
		}
	}
	return paths
}

// sysctls names each sysctl that fails the check on its own.
func sysctls(base *field.Path, spec *corev1.PodSpec, fails func(*corev1.PodSpec) bool) []*field.Path {
	if spec.SecurityContext == nil {
		return nil
	}
	var paths []*field.Path
	for k, s := range spec.SecurityContext.Sysctls {
		one := spec.DeepCopy()
		one.SecurityContext.Sysctls = []corev1.Sysctl{s}
		if fails(one) {
			paths = append(paths, base.Child("securityContext", "sysctls").Index(k))
		}
	}
	return paths
}

// appArmor: the pod's profile, or else the AppArmor annotations of the template's metadata,
// which the detail names.
func appArmor(base *field.Path, spec *corev1.PodSpec, _ func(*corev1.PodSpec) bool) []*field.Path {
	if spec.SecurityContext != nil && spec.SecurityContext.AppArmorProfile != nil {
		return []*field.Path{base.Child("securityContext", "appArmorProfile")}
	}
	return nil
}

func hostPorts(p *field.Path, c *corev1.Container) *field.Path {
	for k, port := range c.Ports {
		if port.HostPort != 0 {
			return p.Child("ports").Index(k).Child("hostPort")
		}
	}
	return p.Child("ports")
}

// hostProbes names the first probe or lifecycle hook of c with a host.
func hostProbes(p *field.Path, c *corev1.Container) *field.Path {
	probes := []struct {
		name  string
		probe *corev1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}}
	for _, pr := range probes {
		if pr.probe == nil {
			continue
		}
		if pr.probe.HTTPGet != nil && pr.probe.HTTPGet.Host != "" {
			return p.Child(pr.name, "httpGet", "host")
		}
		if pr.probe.TCPSocket != nil && pr.probe.TCPSocket.Host != "" {
			return p.Child(pr.name, "tcpSocket", "host")
		}
	}
	if c.Lifecycle != nil {
		for _, hook := range []struct {
			name string
			h    *corev1.LifecycleHandler
		}{{"postStart", c.Lifecycle.PostStart}, {"preStop", c.Lifecycle.PreStop}} {
			name, h := hook.name, hook.h
			if h == nil {
				continue
			}
			if h.HTTPGet != nil && h.HTTPGet.Host != "" {
				return p.Child("lifecycle", name, "httpGet", "host")
			}
			if h.TCPSocket != nil && h.TCPSocket.Host != "" {
				return p.Child("lifecycle", name, "tcpSocket", "host")
			}
		}
	}
	return p
}
