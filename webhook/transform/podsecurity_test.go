package transform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// templated is a valid podTemplate Transform, edited.
func templated(edit func(s *corev1.PodSpec)) *v1alpha1.Transform {
	tr := builders.Transform("pt").PodTemplate(echoImage).Obj()
	c := &tr.Spec.PodTemplate.Spec.Containers[0]
	c.Command, c.Ports = []string{"/transform"}, []corev1.ContainerPort{{Name: "default", ContainerPort: 8000}}
	edit(&tr.Spec.PodTemplate.Spec)
	return tr
}

func containerSC(s *corev1.PodSpec) *corev1.SecurityContext {
	if s.Containers[0].SecurityContext == nil {
		s.Containers[0].SecurityContext = &corev1.SecurityContext{}
	}
	return s.Containers[0].SecurityContext
}

func podSC(s *corev1.PodSpec) *corev1.PodSecurityContext {
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	return s.SecurityContext
}

const tmpl = "spec.podTemplate.spec."

// One template per upstream check, each refused with exactly the field that fails it. The
// baseline checks that restricted ones override are refused by those.
var podSecurityCases = map[policy.CheckID]struct {
	edit func(*corev1.PodSpec)
	want string
}{
	"allowPrivilegeEscalation": {func(s *corev1.PodSpec) { containerSC(s).AllowPrivilegeEscalation = ptr.To(true) },
		"containers[0].securityContext.allowPrivilegeEscalation"},
	"appArmorProfile": {func(s *corev1.PodSpec) {
		containerSC(s).AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	}, "containers[0].securityContext.appArmorProfile"},
	"capabilities_baseline": {func(s *corev1.PodSpec) {
		containerSC(s).Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"SYS_ADMIN"}}
	}, "containers[0].securityContext.capabilities"},
	"capabilities_restricted": {func(s *corev1.PodSpec) {
		containerSC(s).Capabilities = &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}}
	}, "containers[0].securityContext.capabilities"},
	"hostNamespaces": {func(s *corev1.PodSpec) { s.HostNetwork = true }, "hostNetwork"},
	"hostPathVolumes": {func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	}, "volumes[0]"},
	"restrictedVolumes": {func(s *corev1.PodSpec) {
		s.Volumes = []corev1.Volume{{Name: "ok", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "nfs", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/"}}}}
	}, "volumes[1]"},
	"hostPorts": {func(s *corev1.PodSpec) { s.Containers[0].Ports[0].HostPort = 8000 }, "containers[0].ports[0].hostPort"},
	"hostProbesAndHostLifecycle": {func(s *corev1.PodSpec) {
		s.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1"}}}
	}, "containers[0].livenessProbe.tcpSocket.host"},
	"privileged":           {func(s *corev1.PodSpec) { containerSC(s).Privileged = ptr.To(true) }, "containers[0].securityContext.privileged"},
	"procMount":            {func(s *corev1.PodSpec) { containerSC(s).ProcMount = ptr.To(corev1.UnmaskedProcMount) }, "containers[0].securityContext.procMount"},
	"procMount_restricted": {func(s *corev1.PodSpec) { containerSC(s).ProcMount = ptr.To(corev1.UnmaskedProcMount) }, "containers[0].securityContext.procMount"},
	"runAsNonRoot":         {func(s *corev1.PodSpec) { podSC(s).RunAsNonRoot = ptr.To(false) }, "securityContext.runAsNonRoot"},
	"runAsUser":            {func(s *corev1.PodSpec) { containerSC(s).RunAsUser = ptr.To[int64](0) }, "containers[0].securityContext.runAsUser"},
	"seLinuxOptions": {func(s *corev1.PodSpec) { podSC(s).SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"} },
		"securityContext.seLinuxOptions"},
	"seccompProfile_baseline": {func(s *corev1.PodSpec) {
		podSC(s).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	}, "securityContext.seccompProfile"},
	"seccompProfile_restricted": {func(s *corev1.PodSpec) {
		containerSC(s).SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	}, "containers[0].securityContext.seccompProfile"},
	"sysctls": {func(s *corev1.PodSpec) {
		podSC(s).Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}, {Name: "kernel.msgmax", Value: "1"}}
	}, "securityContext.sysctls[1]"},
	"windowsHostProcess": {func(s *corev1.PodSpec) {
		containerSC(s).WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
	}, "containers[0].securityContext.windowsOptions.hostProcess"},
}

func TestEachPodSecurityCheckNamesItsField(t *testing.T) {
	for _, c := range policy.DefaultChecks() {
		if _, ok := podSecurityCases[c.ID]; !ok {
			t.Errorf("no template refused by upstream's check %s: add one", c.ID)
		}
	}
	for id, tc := range podSecurityCases {
		t.Run(string(id), func(t *testing.T) {
			errs := ValidateCreate(templated(tc.edit))
			if diff := cmp.Diff([]string{tmpl + tc.want + ": " + forbidden}, webhooktest.Keys(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s\n%s", diff, webhooktest.Messages(errs))
			}
			if msg := webhooktest.Messages(errs); !strings.Contains(msg, "the restricted Pod Security Standard forbids") {
				t.Errorf("the refusal does not say why: %s", msg)
			}
		})
	}
}

// An init container is judged as a container, under its own path.
func TestPodSecurityOfInitContainers(t *testing.T) {
	tr := templated(func(s *corev1.PodSpec) {
		s.InitContainers = []corev1.Container{{Name: "setup", Image: echoImage, SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
	})
	tr.Spec.Communication = v1alpha1.CommIO // the io shim's init container comes after the template's
	if diff := cmp.Diff([]string{tmpl + "initContainers[0].securityContext.privileged: " + forbidden}, webhooktest.Keys(ValidateCreate(tr))); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// A template with no securityContext passes: the controller fills it. So does every form with
// every communication and argument, fqn's data root (mlkube's csi volume) included.
func TestPlainTransformsPassPodSecurity(t *testing.T) {
	forms := map[string]*v1alpha1.Transform{
		"podTemplate": templated(func(*corev1.PodSpec) {}),
		"runtime":     builders.Transform("rt").Runtime(echoImage, "/transform").Obj(),
		"code":        builders.Transform("py").Code("python3.11", "def transform(b):\n    return b\n").Obj(),
	}
	for name, tr := range forms {
		for _, comm := range []v1alpha1.Communication{v1alpha1.CommHPush, v1alpha1.CommHPull, v1alpha1.CommIO, v1alpha1.CommWS} {
			for _, arg := range []v1alpha1.Argument{v1alpha1.ArgBytes, v1alpha1.ArgFQN, v1alpha1.ArgURL} {
				if name == "code" && comm == v1alpha1.CommIO {
					continue // code runs in its runtime, which is no io command
				}
				tr := tr.DeepCopy()
				tr.Spec.Communication, tr.Spec.Argument = comm, arg
				if errs := ValidateCreate(tr); len(errs) > 0 {
					t.Errorf("%s %s %s refused:\n%s", name, comm, arg, webhooktest.Messages(errs))
				}
			}
		}
	}
}

func TestReservedNamesRefused(t *testing.T) {
	reserved := []corev1.VolumeMount{{Name: "mlkube-data", MountPath: "/data"}}
	cases := map[string]struct {
		edit func(*corev1.PodSpec)
		want []string
	}{
		"mount of the data root in the container": {func(s *corev1.PodSpec) { s.Containers[0].VolumeMounts = reserved },
			[]string{tmpl + "containers[0].volumeMounts[0].name: " + forbidden}},
		"mount of the data root in an init container": {func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "peek", Image: echoImage, VolumeMounts: reserved}}
		}, []string{tmpl + "initContainers[0].volumeMounts[0].name: " + forbidden}},
		"a volume of mlkube's name": {func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "mlkube-bin", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, []string{tmpl + "volumes[0].name: " + forbidden}},
		"the data driver": {func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "data.mlkube.io"}}}}
		}, []string{tmpl + "volumes[0].csi.driver: " + forbidden}},
		"the io shim's init container": {func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "io-shim-install", Image: echoImage}}
		}, []string{tmpl + "initContainers[0].name: " + forbidden}},
		"mlkube's variables": {func(s *corev1.PodSpec) {
			s.Containers[0].Env = []corev1.EnvVar{{Name: "MY_VAR"}, {Name: "MLKUBE_FQN_ROOT", Value: "/"}}
			s.InitContainers = []corev1.Container{{Name: "init", Image: echoImage, Env: []corev1.EnvVar{{Name: "MLKUBE_NODE"}}}}
		}, []string{tmpl + "initContainers[0].env[0].name: " + forbidden, tmpl + "containers[0].env[1].name: " + forbidden}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, webhooktest.Keys(ValidateCreate(templated(tc.edit)))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
