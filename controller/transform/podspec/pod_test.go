package podspec_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/transform/podspec"
	"github.com/mlkube/mlkube/internal/builders"
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

	fqn := defaulted(builders.Transform("fqn").Runtime("img").Spec(func(s *v1alpha1.TransformSpec) { s.Argument = v1alpha1.ArgFQN }))
	c = podspec.Build(fqn, "node-1", devImages).Spec.Containers[0]
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != wire.DataRoot || !c.VolumeMounts[0].ReadOnly || env(c)["MLKUBE_FQN_ROOT"] != wire.DataRoot {
		t.Errorf("fqn container lacks the data root: %+v", c)
	}
	if hp := podspec.Build(fqn, "node-1", devImages).Spec.Volumes[0].HostPath; hp == nil || hp.Path != wire.DataRoot+"/node-1/"+fqn.Namespace {
		t.Errorf("fqn data root volume %+v; want only its namespace's directory of the node's", hp)
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
