package podspec_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/transform/podspec"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/restricted/restrictedtest"
	"github.com/mlkube/mlkube/webhook/transform"
)

// devImages are the images pods run unless the manager is given others.
var devImages = wire.DefaultPodImages()

// defaulted is the Transform as the API server stores it, after the webhook's defaults.
func defaulted(b *builders.TransformBuilder) *v1alpha1.Transform {
	t := b.Obj()
	t.UID, t.Generation = "t-uid", 1
	transform.Default(t)
	return t
}

func env(c corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

func TestBuildPodForms(t *testing.T) {
	runtime := defaulted(builders.Transform("rt").Runtime("mlkube/transformer-md5:dev", "/md5").Comm(v1alpha1.CommWS))
	pod := podspec.Build(runtime, "node-1", devImages)
	c := pod.Spec.Containers[0]
	if pod.Name != "rt-"+v1alpha1.NodeHash("node-1") || len(pod.Name) > 63 {
		t.Errorf("pod name %q", pod.Name)
	}
	if c.Image != "mlkube/transformer-md5:dev" || !slices.Equal(c.Command, []string{"/md5"}) || env(c)["PORT"] != "8000" {
		t.Errorf("runtime container %+v", c)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/health" {
		t.Error("no readiness probe on /health")
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("the kubelet must not restart transformers in place")
	}
	term := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
	if term.Key != "kubernetes.io/hostname" || !slices.Equal(term.Values, []string{"node-1"}) {
		t.Errorf("not pinned to node-1: %+v", term)
	}
	wantLabels := map[string]string{"app.kubernetes.io/managed-by": "mlkube", v1alpha1.LabelName: "rt", v1alpha1.LabelNode: "node-1",
		labels.Name: "etl", labels.Component: "transformer"}
	if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}

	code := defaulted(builders.Transform("py").Code("python3.11", "def transform(b):\n    return b[::-1]\n"))
	c = podspec.Build(code, "node-1", devImages).Spec.Containers[0]
	if c.Image != "mlkube/runtime-python3.11:dev" || env(c)["MLKUBE_CODE_FUNCTION"] != "transform" || env(c)["MLKUBE_CODE_SOURCE"] == "" {
		t.Errorf("code container %+v", c)
	}

	io := defaulted(builders.Transform("io").Runtime("busybox", "md5sum").Comm(v1alpha1.CommIO))
	io.Spec.Runtime.Args = []string{"-b"}
	spec := podspec.Build(io, "node-1", devImages).Spec
	if len(spec.InitContainers) != 1 || spec.InitContainers[0].Image != "mlkube/io-shim:dev" {
		t.Fatalf("io form lacks the shim's init container: %+v", spec.InitContainers)
	}
	if got := spec.Containers[0].Command; !slices.Equal(got, []string{"/mlkube/bin/io-shim", "--", "md5sum", "-b"}) {
		t.Errorf("io command %v; want the user's command under the shim", got)
	}
	io.Spec.IOMode = v1alpha1.IOPersistent
	if got := podspec.Build(io, "node-1", devImages).Spec.Containers[0].Command; !slices.Equal(got, []string{"/mlkube/bin/io-shim", "--persistent", "--", "md5sum", "-b"}) {
		t.Errorf("persistent io command %v; want the shim's --persistent before the user's command", got)
	}

	fqn := defaulted(builders.Transform("fqn").Runtime("img").Spec(func(s *v1alpha1.TransformSpec) { s.Argument = v1alpha1.ArgFQN }))
	c = podspec.Build(fqn, "node-1", devImages).Spec.Containers[0]
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != wire.DataRoot || !c.VolumeMounts[0].ReadOnly || env(c)["MLKUBE_FQN_ROOT"] != wire.DataRoot {
		t.Errorf("fqn container lacks the data root: %+v", c)
	}
	want := corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: wire.DataDriver, ReadOnly: ptr.To(true)}}
	if diff := cmp.Diff(want, podspec.Build(fqn, "node-1", devImages).Spec.Volumes[0].VolumeSource); diff != "" {
		t.Errorf("fqn data root volume (-want +got):\n%s", diff)
	}
}

func TestBuildPodFromTemplateKeepsItsOwnSettings(t *testing.T) {
	tr := builders.Transform("tmpl").PodTemplate("img").Obj()
	tr.Spec.PodTemplate.Labels = map[string]string{"team": "data"}
	tr.Spec.PodTemplate.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "default", ContainerPort: 9000}}
	tr = defaulted(builders.Transform("tmpl").Spec(func(s *v1alpha1.TransformSpec) { *s = tr.Spec }))
	pod := podspec.Build(tr, "node-2", devImages)
	if pod.Labels["team"] != "data" || pod.Labels[v1alpha1.LabelName] != "tmpl" {
		t.Errorf("labels %v", pod.Labels)
	}
	if env(pod.Spec.Containers[0])["PORT"] != "9000" {
		t.Error("PORT does not follow the template's default port")
	}
}

// The controller finds its pods and their nodes by its own labels and annotations, so a template
// that sets the same keys must not override them.
func TestBuildPodControllerMetadataWins(t *testing.T) {
	tr := builders.Transform("tmpl").PodTemplate("img").Obj()
	tr.Spec.PodTemplate.Labels = map[string]string{v1alpha1.LabelName: "other", v1alpha1.LabelNode: "node-9", "team": "data"}
	tr.Spec.PodTemplate.Annotations = map[string]string{v1alpha1.LabelNode: "node-9", "note": "kept"}
	tr = defaulted(builders.Transform("tmpl").Spec(func(s *v1alpha1.TransformSpec) { *s = tr.Spec }))
	pod := podspec.Build(tr, "node-2", devImages)
	wantLabels := map[string]string{"team": "data"}
	maps.Copy(wantLabels, podspec.Labels(tr))
	wantLabels[v1alpha1.LabelNode] = "node-2"
	if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{v1alpha1.LabelNode: "node-2", "note": "kept"}, pod.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
}

// A release runs its own io shim and code runtime images (the manager's --io-shim-image and
// --code-runtime-image): pods take them, not the development defaults.
func TestBuildPodRunsGivenImages(t *testing.T) {
	images := wire.DefaultPodImages()
	if err := images.SetIOShim("reg.example/mlkube/io-shim:v0.2.0@sha256:" + strings.Repeat("1", 64)); err != nil {
		t.Fatal(err)
	}
	if err := images.SetCodeRuntime("python3.11=reg.example/mlkube/runtime-python3.11:v0.2.0"); err != nil {
		t.Fatal(err)
	}
	code := defaulted(builders.Transform("py").Code("python3.11", "def transform(b):\n    return b\n"))
	io := defaulted(builders.Transform("io").Runtime("busybox", "md5sum").Comm(v1alpha1.CommIO))
	got := []string{podspec.Build(code, "node-1", images).Spec.Containers[0].Image}
	for _, c := range podspec.Build(io, "node-1", images).Spec.InitContainers {
		got = append(got, c.Image)
	}
	want := []string{images.CodeRuntimes["python3.11"], images.IOShim}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the code runtime's and the io shim's images (-want +got):\n%s", diff)
	}
}

// forms are a Transform of each form, with a command so that io can run it.
func forms() map[string]*builders.TransformBuilder {
	return map[string]*builders.TransformBuilder{
		"runtime": builders.Transform("rt").Runtime("img", "/transform"),
		"code":    builders.Transform("py").Code("python3.11", "def transform(b):\n    return b\n"),
		"podTemplate": builders.Transform("pt").PodTemplate("img").Spec(func(s *v1alpha1.TransformSpec) {
			c := &s.PodTemplate.Spec.Containers[0]
			c.Command, c.Ports = []string{"/transform"}, []corev1.ContainerPort{{Name: "default", ContainerPort: 8000}}
		}),
	}
}

// Every pod mlkube builds passes the restricted Pod Security Standard, fqn's data root (a csi
// volume) included, and none has a hostPath volume.
func TestBuiltPodsPassRestricted(t *testing.T) {
	for form, b := range forms() {
		for _, comm := range []v1alpha1.Communication{v1alpha1.CommHPush, v1alpha1.CommHPull, v1alpha1.CommIO, v1alpha1.CommWS} {
			for _, arg := range []v1alpha1.Argument{v1alpha1.ArgBytes, v1alpha1.ArgFQN, v1alpha1.ArgURL} {
				tr := b.Obj()
				tr.Spec.Communication, tr.Spec.Argument = comm, arg
				tr = defaulted(builders.Transform(tr.Name).Spec(func(s *v1alpha1.TransformSpec) { *s = tr.Spec }))
				pod := podspec.Build(tr, "node-1", devImages)
				v, err := restrictedtest.Violations(&pod.Spec)
				if err != nil {
					t.Fatal(err)
				}
				if len(v) > 0 {
					t.Errorf("%s %s %s: the built pod fails restricted: %v", form, comm, arg, v)
				}
				for _, vol := range pod.Spec.Volumes {
					if vol.HostPath != nil {
						t.Errorf("%s %s %s: volume %s is a hostPath", form, comm, arg, vol.Name)
					}
				}
			}
		}
	}
}

func TestBuildPodMountsNoServiceAccountTokenUnlessAsked(t *testing.T) {
	for form, b := range forms() {
		if got := podspec.Build(defaulted(b), "node-1", devImages).Spec.AutomountServiceAccountToken; got == nil || *got {
			t.Errorf("%s: automountServiceAccountToken %v; want false", form, got)
		}
	}
	tr := forms()["podTemplate"].Spec(func(s *v1alpha1.TransformSpec) {
		s.PodTemplate.Spec.AutomountServiceAccountToken = ptr.To(true)
		s.PodTemplate.Spec.ServiceAccountName = "reader"
	})
	spec := podspec.Build(defaulted(tr), "node-1", devImages).Spec
	if got := spec.AutomountServiceAccountToken; got == nil || !*got || spec.ServiceAccountName != "reader" {
		t.Errorf("automountServiceAccountToken %v, ServiceAccount %q; want the template's true and reader", got, spec.ServiceAccountName)
	}
}

// The template's own security settings stay as written; only what it leaves unset is filled.
func TestBuildPodKeepsTheTemplatesSecurityContext(t *testing.T) {
	own := &corev1.SecurityContext{
		RunAsUser: ptr.To[int64](1000), RunAsNonRoot: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}},
	}
	tr := forms()["podTemplate"].Spec(func(s *v1alpha1.TransformSpec) {
		s.PodTemplate.Spec.Containers[0].SecurityContext = own.DeepCopy()
		s.PodTemplate.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}}
	})
	spec := podspec.Build(defaulted(tr), "node-1", devImages).Spec
	if diff := cmp.Diff(own, spec.Containers[0].SecurityContext); diff != "" {
		t.Errorf("container securityContext (-template +built):\n%s", diff)
	}
	psc := spec.SecurityContext
	if psc.SeccompProfile.Type != corev1.SeccompProfileTypeLocalhost || psc.RunAsUser != nil || psc.RunAsGroup != nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("pod securityContext %+v; want the template's seccomp profile, no user or group added, runAsNonRoot filled", psc)
	}
}
