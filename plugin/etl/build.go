package etl

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/etl/aisspec"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/runtimes/python/pysig"
)

// Common holds what every form of `init` may set: how the agent talks to the transformer and
// its timeouts. A nil field leaves the Transform's own value (or the webhook's default).
type Common struct {
	Communication *string
	IOMode        *string
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
	if c.IOMode != nil {
		spec.IOMode = v1alpha1.IOMode(*c.IOMode)
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

// SpecTransform converts one AIStore ETL spec, its runtime spec or a Pod manifest with AIStore's
// annotations (package aisspec), into a Transform named name, or else as the spec names it. The
// fields c sets win over the spec's.
func SpecTransform(doc []byte, name, namespace string, c Common) (*aisspec.Conversion, error) {
	if aisspec.Form(doc) == "" {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("the spec is not YAML or JSON: %w", err)
		}
		return nil, fmt.Errorf("apiVersion %s, kind %s: init spec takes an AIStore ETL runtime spec (name, runtime.image) or a Pod; init -f takes Transforms too",
			orUnset(tm.APIVersion), orUnset(tm.Kind))
	}
	conv, err := aisspec.Convert(doc, name, namespace)
	if err != nil {
		return nil, err
	}
	c.apply(&conv.Transform.Spec)
	return conv, nil
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

// ArgsReach says whether a request's args reach t's transformer, for `run --args` and `object
// --args` to refuse args that would be dropped silently. It returns nil when they do or when it
// cannot tell: an image (runtime or podTemplate form) reads ?args= itself, and a code function
// not defined by a plain top-level def is judged by the runtime alone. Otherwise the error says
// why and how to define the function (runtimes/python/pysig reads it as the runtime does).
func ArgsReach(t *v1alpha1.Transform) error {
	code := t.Spec.Code
	if code == nil {
		return nil
	}
	fn := code.Function
	if fn == "" {
		fn = v1alpha1.DefaultFunction
	}
	if p, ok := pysig.Read(code.Source, fn); !ok || p.Args {
		return nil
	}
	return fmt.Errorf("--args cannot reach Transform %s: its function %s() takes no etl_args parameter, so the runtime would drop them; "+
		"define it as %s(data, path, etl_args) (or give it a keyword-only etl_args) and create the Transform again, or leave out --args", t.Name, fn, fn)
}

// FileTransforms reads the Transforms of YAML or JSON documents (empty ones are skipped),
// converting AIStore's ETL specs (package aisspec); a native Transform's conversion lists no
// changes. Those without a namespace get namespace, and each gets the fields c sets.
func FileTransforms(docs [][]byte, namespace string, c Common) ([]*aisspec.Conversion, error) {
	var out []*aisspec.Conversion
	for i, doc := range docs {
		if cli.EmptyDocument(doc) {
			continue
		}
		conv, err := fileDocument(doc, namespace)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		c.apply(&conv.Transform.Spec)
		out = append(out, conv)
	}
	if len(out) == 0 {
		return nil, errors.New("no Transform in the file")
	}
	return out, nil
}

// fileDocument reads one document: a Transform, or an AIStore spec converted. The kind is checked
// before the fields, so a Deployment is named as such rather than reported as unknown fields.
func fileDocument(doc []byte, namespace string) (*aisspec.Conversion, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	want := v1alpha1.GroupVersion.String()
	if tm.APIVersion == want && tm.Kind == "Transform" {
		t, err := decodeTransform(doc)
		if err != nil {
			return nil, err
		}
		if t.Namespace == "" {
			t.Namespace = namespace
		}
		return &aisspec.Conversion{Transform: t}, nil
	}
	if aisspec.Form(doc) != "" {
		return aisspec.Convert(doc, "", namespace)
	}
	return nil, fmt.Errorf("apiVersion %s, kind %s: want a %s Transform, an AIStore ETL runtime spec (name, runtime.image) or an AIStore ETL Pod",
		orUnset(tm.APIVersion), orUnset(tm.Kind), want)
}

func decodeTransform(doc []byte) (*v1alpha1.Transform, error) {
	var t v1alpha1.Transform
	if err := yaml.UnmarshalStrict(doc, &t); err != nil {
		return nil, err
	}
	if t.Name == "" {
		return nil, errors.New("the Transform has no metadata.name")
	}
	t.Status = v1alpha1.TransformStatus{}
	return &t, nil
}

func orUnset(s string) string {
	if s == "" {
		return "<unset>"
	}
	return s
}
