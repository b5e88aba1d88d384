package etl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

func ptr[T any](v T) *T { return &v }

func transform(name, ns string, spec v1alpha1.TransformSpec) *v1alpha1.Transform {
	return &v1alpha1.Transform{
		TypeMeta:   metav1.TypeMeta{APIVersion: "etl.mlkube.io/v1alpha1", Kind: "Transform"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       spec,
	}
}

const aisPod = `apiVersion: v1
kind: Pod
metadata:
  name: transformer-md5
  annotations:
    communication_type: "hpush://"
    wait_timeout: 2m
  labels: {app: md5}
spec:
  containers:
  - name: server
    image: aistore/transformer_md5:latest
    ports: [{name: default, containerPort: 8000}]
`

// TestSpecTransform: init spec converts one AIStore spec (package aisspec has the corpus) and the
// flags win over it.
func TestSpecTransform(t *testing.T) {
	template := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "md5"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "aistore/transformer_md5:latest",
			Ports: []corev1.ContainerPort{{Name: "default", ContainerPort: 8000}}}}},
	}
	cases := map[string]struct {
		pod     string
		name    string
		common  Common
		want    *v1alpha1.Transform
		wantErr string
	}{
		"an AIStore pod spec's annotations become its communication and timeout": {
			pod: aisPod, name: "md5",
			want: transform("md5", "ns", v1alpha1.TransformSpec{PodTemplate: template,
				Communication: "hpush", InitTimeout: &metav1.Duration{Duration: 2 * time.Minute}}),
		},
		"flags win over annotations; the pod's name serves without --name": {
			pod: aisPod,
			common: Common{Communication: ptr("ws"), Argument: ptr("fqn"), InitTimeout: ptr(time.Minute),
				ObjectTimeout: ptr(5 * time.Second)},
			want: transform("transformer-md5", "ns", v1alpha1.TransformSpec{PodTemplate: template,
				Communication: "ws", Argument: "fqn", InitTimeout: &metav1.Duration{Duration: time.Minute},
				ObjectTimeout: &metav1.Duration{Duration: 5 * time.Second}}),
		},
		"--io-mode sets the mode": {
			pod: aisPod, name: "md5", common: Common{Communication: ptr("io"), IOMode: ptr("Persistent")},
			want: transform("md5", "ns", v1alpha1.TransformSpec{PodTemplate: template,
				Communication: "io", IOMode: v1alpha1.IOPersistent, InitTimeout: &metav1.Duration{Duration: 2 * time.Minute}}),
		},
		"an AIStore runtime spec": {
			pod: "name: md5-etl\nruntime: {image: aistorage/transformer_md5:latest}\ncommunication: hpull://\n", name: "md5",
			want: transform("md5", "ns", v1alpha1.TransformSpec{Communication: "hpull",
				Runtime: &v1alpha1.RuntimeSpec{Image: "aistorage/transformer_md5:latest"}}),
		},
		"no name anywhere": {
			pod:     "kind: Pod\nspec: {containers: [{name: a, image: b}]}\n",
			wantErr: "metadata.name is required: it names the Transform",
		},
		"not a pod": {
			pod: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n", name: "x",
			wantErr: "apiVersion apps/v1, kind Deployment: init spec takes an AIStore ETL runtime spec (name, runtime.image) or a Pod; init -f takes Transforms too",
		},
		"a bad wait_timeout": {
			pod: "kind: Pod\nmetadata: {annotations: {wait_timeout: soon}}\n", name: "x",
			wantErr: `metadata.annotations.wait_timeout "soon" is not a duration: write one such as 45s or 5m`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			conv, err := SpecTransform([]byte(tc.pod), tc.name, "ns", tc.common)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			var got *v1alpha1.Transform
			if conv != nil {
				got = conv.Transform
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Transform (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCodeTransform(t *testing.T) {
	code := Code{Runtime: "python3.11", Source: "def transform(b): return b\n", Dependencies: "numpy\n", Function: "transform", ChunkSize: 4096}
	got, err := CodeTransform(code, "echo", "ns", Common{Communication: ptr("hpull")})
	if err != nil {
		t.Fatal(err)
	}
	want := transform("echo", "ns", v1alpha1.TransformSpec{Communication: "hpull", Code: &v1alpha1.CodeSpec{
		Runtime: "python3.11", Source: "def transform(b): return b\n", Dependencies: "numpy\n", Function: "transform", ChunkSize: 4096}})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Transform (-want +got):\n%s", diff)
	}
	if _, err := CodeTransform(code, "", "ns", Common{}); errString(err) != "the Transform needs a name: pass --name" {
		t.Errorf("without a name: %v", err)
	}
}

func TestFileTransforms(t *testing.T) {
	cases := map[string]struct {
		file    string
		common  Common
		want    []*v1alpha1.Transform
		wantErr string
	}{
		"several documents, empty ones skipped, status dropped, flags applied": {
			file: `---
apiVersion: etl.mlkube.io/v1alpha1
kind: Transform
metadata: {name: md5}
spec: {communication: ws, runtime: {image: md5}}
status: {stage: Running}
---
---
apiVersion: etl.mlkube.io/v1alpha1
kind: Transform
metadata: {name: echo, namespace: other}
spec: {runtime: {image: echo}}
`,
			common: Common{ObjectTimeout: ptr(time.Minute)},
			want: []*v1alpha1.Transform{
				transform("md5", "ns", v1alpha1.TransformSpec{Communication: "ws", Runtime: &v1alpha1.RuntimeSpec{Image: "md5"},
					ObjectTimeout: &metav1.Duration{Duration: time.Minute}}),
				transform("echo", "other", v1alpha1.TransformSpec{Runtime: &v1alpha1.RuntimeSpec{Image: "echo"},
					ObjectTimeout: &metav1.Duration{Duration: time.Minute}}),
			},
		},
		"JSON": {
			file: `{"apiVersion": "etl.mlkube.io/v1alpha1", "kind": "Transform", "metadata": {"name": "j"}, "spec": {"runtime": {"image": "i"}}}`,
			want: []*v1alpha1.Transform{transform("j", "ns", v1alpha1.TransformSpec{Runtime: &v1alpha1.RuntimeSpec{Image: "i"}})},
		},
		"an AIStore pod and runtime spec among Transforms, converted": {
			file:   aisPod + "---\nname: echo-etl\nruntime: {image: aistorage/transformer_echo:latest}\nargument: fqn\n",
			common: Common{ObjectTimeout: ptr(time.Minute)},
			want: []*v1alpha1.Transform{
				transform("transformer-md5", "ns", v1alpha1.TransformSpec{Communication: "hpush",
					InitTimeout: &metav1.Duration{Duration: 2 * time.Minute}, ObjectTimeout: &metav1.Duration{Duration: time.Minute},
					PodTemplate: &corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "md5"}},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "aistore/transformer_md5:latest",
							Ports: []corev1.ContainerPort{{Name: "default", ContainerPort: 8000}}}}},
					}}),
				transform("echo-etl", "ns", v1alpha1.TransformSpec{Argument: "fqn", ObjectTimeout: &metav1.Duration{Duration: time.Minute},
					Runtime: &v1alpha1.RuntimeSpec{Image: "aistorage/transformer_echo:latest"}}),
			},
		},
		"neither a Transform nor AIStore's": {
			file:    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n",
			wantErr: "document 1: apiVersion apps/v1, kind Deployment: want a etl.mlkube.io/v1alpha1 Transform, an AIStore ETL runtime spec (name, runtime.image) or an AIStore ETL Pod",
		},
		"no name": {
			file:    "apiVersion: etl.mlkube.io/v1alpha1\nkind: Transform\nspec: {runtime: {image: i}}\n",
			wantErr: "document 1: the Transform has no metadata.name",
		},
		"a typo in the second document": {
			file:    "apiVersion: etl.mlkube.io/v1alpha1\nkind: Transform\nmetadata: {name: a}\n---\napiVersion: etl.mlkube.io/v1alpha1\nkind: Transform\nmetadata: {name: b}\nspec: {runtme: {}}\n",
			wantErr: `document 2: error unmarshaling JSON: while decoding JSON: json: unknown field "runtme"`,
		},
		"empty": {file: "---\n", wantErr: "no Transform in the file"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			docs, err := cli.ReadDocuments(context.Background(), "-", strings.NewReader(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			convs, err := FileTransforms(docs, "ns", tc.common)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			var got []*v1alpha1.Transform
			for _, c := range convs {
				got = append(got, c.Transform)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Transforms (-want +got):\n%s", diff)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestArgsReach: --args is refused only for a code function that surely drops them.
func TestArgsReach(t *testing.T) {
	code := func(source, function string) *v1alpha1.Transform {
		return transform("upper", "ns", v1alpha1.TransformSpec{Code: &v1alpha1.CodeSpec{Runtime: "python3.11", Source: source, Function: function}})
	}
	for name, tc := range map[string]struct {
		t    *v1alpha1.Transform
		want string
	}{
		"an image reads ?args= itself": {t: transform("md5", "ns", v1alpha1.TransformSpec{Runtime: &v1alpha1.RuntimeSpec{Image: "md5"}})},
		"AIStore's signature":          {t: code("def transform(data, path, etl_args):\n    return data\n", "")},
		"keyword-only etl_args":        {t: code("def up(data, *, etl_args):\n    return data\n", "up")},
		"cannot tell":                  {t: code("transform = lambda data: data\n", "")},
		"bytes only": {t: code("def transform(data):\n    return data.upper()\n", ""),
			want: "--args cannot reach Transform upper: its function transform() takes no etl_args parameter, so the runtime would drop them; define it as transform(data, path, etl_args) (or give it a keyword-only etl_args) and create the Transform again, or leave out --args"},
		"the name but not the args": {t: code("def up(data, path):\n    return data\n", "up"),
			want: "--args cannot reach Transform upper: its function up() takes no etl_args parameter, so the runtime would drop them; define it as up(data, path, etl_args) (or give it a keyword-only etl_args) and create the Transform again, or leave out --args"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := errString(ArgsReach(tc.t)); got != tc.want {
				t.Errorf("ArgsReach = %q\nwant %q", got, tc.want)
			}
		})
	}
}
