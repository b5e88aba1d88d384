package etl

import (
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// Common holds what every form of `init` may set: how the agent talks to the transformer and
// its timeouts. A nil field leaves the Transform's own value (or the webhook's default).
type Common struct {
	Communication *string
	Argument      *string
	InitTimeout   *time.Duration
	ObjectTimeout *time.Duration
}

// apply sets the fields of c that are given. Values are checked by the admission webhook, whose
// messages name the field and the remedy; checking them here too would be a second copy of its
// rules ("hpush://" included) to keep in step.
func (c Common) apply(spec *v1alpha1.TransformSpec) {
	if c.Communication != nil {
		spec.Communication = v1alpha1.Communication(*c.Communication)
	}
	if c.Argument != nil {
		spec.Argument = v1alpha1.Argument(*c.Argument)
	}
	if c.InitTimeout != nil {
		spec.InitTimeout = &metav1.Duration{Duration: *c.InitTimeout}
	}
	if c.ObjectTimeout != nil {
		spec.ObjectTimeout = &metav1.Duration{Duration: *c.ObjectTimeout}
	}
}

// newTransform is a Transform of the given name and namespace with the typed fields a create
// and `-o yaml` need.
func newTransform(name, namespace string, spec v1alpha1.TransformSpec) *v1alpha1.Transform {
	return &v1alpha1.Transform{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Transform"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       spec,
	}
}

// AIStore's ETL pod specs carry their communication and init timeout as annotations; honouring
// them lets such a file work unchanged with `init spec`.
const (
	aisCommAnnotation        = "communication_type"
	aisWaitTimeoutAnnotation = "wait_timeout"
)

// SpecTransform builds a Transform of the podTemplate form from a Pod manifest: its labels,
// annotations and spec become the template. The name is name, or else the pod's.
func SpecTransform(podYAML []byte, name, namespace string, c Common) (*v1alpha1.Transform, error) {
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(podYAML, &pod); err != nil {
		return nil, fmt.Errorf("the pod spec is not a Pod manifest: %w", err)
	}
	if pod.Kind != "" && pod.Kind != "Pod" {
		return nil, fmt.Errorf("the pod spec is a %s; init spec takes a Pod (use init -f for a Transform)", pod.Kind)
	}
	if name == "" {
		name = pod.Name
	}
	if name == "" {
		return nil, errors.New("the Transform needs a name: pass --name or set metadata.name in the pod spec")
	}
	spec := v1alpha1.TransformSpec{PodTemplate: &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations},
		Spec:       pod.Spec,
	}}
	if comm, ok := pod.Annotations[aisCommAnnotation]; ok {
		spec.Communication = v1alpha1.Communication(comm)
	}
	if wait, ok := pod.Annotations[aisWaitTimeoutAnnotation]; ok {
		d, err := time.ParseDuration(wait)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w; write a duration such as 2m or pass --init-timeout", aisWaitTimeoutAnnotation, err)
		}
		spec.InitTimeout = &metav1.Duration{Duration: d}
	}
	c.apply(&spec)
	return newTransform(name, namespace, spec), nil
}

// Code is the source of a Transform of the code form, read from the files `init code` names.
type Code struct {
	Runtime, Source, Dependencies, Function string
	ChunkSize                               int64
}

// CodeTransform builds a Transform of the code form.
func CodeTransform(code Code, name, namespace string, c Common) (*v1alpha1.Transform, error) {
	if name == "" {
		return nil, errors.New("the Transform needs a name: pass --name")
	}
	spec := v1alpha1.TransformSpec{Code: &v1alpha1.CodeSpec{
		Runtime: code.Runtime, Source: code.Source, Dependencies: code.Dependencies,
		Function: code.Function, ChunkSize: code.ChunkSize,
	}}
	c.apply(&spec)
	return newTransform(name, namespace, spec), nil
}

// FileTransforms reads the Transforms of a YAML or JSON stream of documents (empty ones are
// skipped); those without a namespace get namespace, and each gets the fields c sets.
func FileTransforms(r io.Reader, namespace string, c Common) ([]*v1alpha1.Transform, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*v1alpha1.Transform
	for doc := 1; ; doc++ {
		var raw map[string]any
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if len(raw) == 0 {
			continue
		}
		t, err := decodeTransform(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if t.Namespace == "" {
			t.Namespace = namespace
		}
		c.apply(&t.Spec)
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, errors.New("no Transform in the file")
	}
	return out, nil
}

// decodeTransform checks a document's kind before its fields, so a Pod given to `init -f` is
// named as such rather than reported as unknown fields.
func decodeTransform(raw map[string]any) (*v1alpha1.Transform, error) {
	want := v1alpha1.GroupVersion.String()
	if raw["apiVersion"] != want || raw["kind"] != "Transform" {
		return nil, fmt.Errorf("apiVersion %v, kind %v: want %s Transform (init spec takes a Pod)", raw["apiVersion"], raw["kind"], want)
	}
	js, err := yaml.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var t v1alpha1.Transform
	if err := yaml.UnmarshalStrict(js, &t); err != nil {
		return nil, err
	}
	if t.Name == "" {
		return nil, errors.New("the Transform has no metadata.name")
	}
	t.Status = v1alpha1.TransformStatus{}
	return &t, nil
}
