package etl

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
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

func TestSpecTransform(t *testing.T) {
	template := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "md5"},
			Annotations: map[string]string{"communication_type": "hpush://", "wait_timeout": "2m"}},
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
		"an AIStore pod spec keeps its annotations' communication and timeout": {
			pod: aisPod, name: "md5",
			want: transform("md5", "ns", v1alpha1.TransformSpec{PodTemplate: template,
				Communication: "hpush://", InitTimeout: &metav1.Duration{Duration: 2 * time.Minute}}),
		},
		"flags win over annotations; the pod's name serves without --name": {
			pod: aisPod,
			common: Common{Communication: ptr("ws"), Argument: ptr("fqn"), InitTimeout: ptr(time.Minute),
				ObjectTimeout: ptr(5 * time.Second)},
			want: transform("transformer-md5", "ns", v1alpha1.TransformSpec{PodTemplate: template,
				Communication: "ws", Argument: "fqn", InitTimeout: &metav1.Duration{Duration: time.Minute},
				ObjectTimeout: &metav1.Duration{Duration: 5 * time.Second}}),
		},
		"no name anywhere": {
			pod:     "kind: Pod\nspec: {containers: [{name: a, image: b}]}\n",
			wantErr: "the Transform needs a name: pass --name or set metadata.name in the pod spec",
		},
		"not a pod": {
			pod: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n", name: "x",
			wantErr: "the pod spec is a Deployment; init spec takes a Pod (use init -f for a Transform)",
		},
		"a typo is refused": {
			pod: "kind: Pod\nspec: {containrs: []}\n", name: "x",
			wantErr: `the pod spec is not a Pod manifest: error unmarshaling JSON: while decoding JSON: json: unknown field "containrs"`,
		},
		"a bad wait_timeout": {
			pod: "kind: Pod\nmetadata: {annotations: {wait_timeout: soon}}\n", name: "x",
			wantErr: `annotation wait_timeout: time: invalid duration "soon"; write a duration such as 2m or pass --init-timeout`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := SpecTransform([]byte(tc.pod), tc.name, "ns", tc.common)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
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
		"a pod": {
			file:    aisPod,
			wantErr: "document 1: apiVersion v1, kind Pod: want etl.mlkube.io/v1alpha1 Transform (init spec takes a Pod)",
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
			got, err := FileTransforms(strings.NewReader(tc.file), "ns", tc.common)
			if diff := cmp.Diff(tc.wantErr, errString(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
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
