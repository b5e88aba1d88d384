package api_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

const crdDir = "../manifests/crd/bases"

// crdRoots names every generated CRD by its file and the Go type of its objects.
var crdRoots = map[string]reflect.Type{
	"mxnet.mlkube.io_mxjobs.yaml":      reflect.TypeFor[v1beta1.MxJob](),
	"etl.mlkube.io_transforms.yaml":    reflect.TypeFor[v1alpha1.Transform](),
	"etl.mlkube.io_transformruns.yaml": reflect.TypeFor[v1alpha1.TransformRun](),
	"etl.mlkube.io_objectstores.yaml":  reflect.TypeFor[v1alpha1.ObjectStore](),
}

// Every field of mlkube's own types carries its description into the CRD, so that `kubectl
// explain` documents the API. The walk follows the Go types beside the schema: it descends into
// mlkube's structs and stops at other packages' types (pod templates, env, tolerations,
// conditions), whose descriptions are Kubernetes' own; only the field that holds them must be
// described. A field missing from the schema fails too, so the walk cannot pass by skipping.
func TestCRDsDescribeEveryField(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := crdRoots[filepath.Base(f)]; !ok {
			t.Errorf("%s has no Go type in crdRoots; add it so its descriptions are checked", f)
		}
	}
	for file, typ := range crdRoots {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(crdDir, file))
			if err != nil {
				t.Fatal(err)
			}
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal(raw, &crd); err != nil {
				t.Fatal(err)
			}
			for _, v := range crd.Spec.Versions {
				root := v.Schema.OpenAPIV3Schema
				if root.Description == "" {
					t.Errorf("%s %s: the kind has no description; write %s's doc comment and run make manifests", v.Name, typ.Name(), typ.Name())
				}
				for _, missing := range undescribed(typ, root, "", true) {
					t.Errorf("%s %s: %s has no description; write its doc comment in %s and run make manifests", v.Name, typ.Name(), missing, typ.PkgPath())
				}
			}
		})
	}
}

// undescribed returns the paths under prefix of struct typ's fields whose schema in s lacks a
// description or is missing.
func undescribed(typ reflect.Type, s *apiextensionsv1.JSONSchemaProps, prefix string, root bool) []string {
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, inline := jsonName(f)
		switch {
		case name == "-" || !f.IsExported():
			continue
		case inline && ours(f.Type):
			out = append(out, undescribed(f.Type, s, prefix, false)...)
			continue
		case inline: // metav1.TypeMeta: apiVersion and kind, described by Kubernetes
			continue
		case root && name == "metadata": // ObjectMeta, which explain documents on its own
			continue
		}
		path := prefix + name
		prop, ok := s.Properties[name]
		if !ok {
			out = append(out, path+" (missing from the schema)")
			continue
		}
		if strings.TrimSpace(prop.Description) == "" {
			out = append(out, path)
		}
		elem, schema := f.Type, &prop
		for schema != nil && (elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice || elem.Kind() == reflect.Map) {
			switch {
			case elem.Kind() == reflect.Slice && schema.Items != nil:
				schema, path = schema.Items.Schema, path+"[]"
			case elem.Kind() == reflect.Map && schema.AdditionalProperties != nil:
				schema, path = schema.AdditionalProperties.Schema, path+"[*]"
			case elem.Kind() != reflect.Pointer:
				schema = nil
			}
			elem = elem.Elem()
		}
		if elem.Kind() == reflect.Struct && ours(elem) {
			if schema == nil {
				out = append(out, path+" (no element schema)")
				continue
			}
			out = append(out, undescribed(elem, schema, path+".", false)...)
		}
	}
	return out
}

// ours says whether t is one of mlkube's types, rather than Kubernetes'.
func ours(t reflect.Type) bool {
	return strings.HasPrefix(t.PkgPath(), "github.com/mlkube/mlkube/")
}

// jsonName is a field's name in JSON, and whether it is inlined into its parent.
func jsonName(f reflect.StructField) (string, bool) {
	tag := f.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" && (strings.Contains(","+opts+",", ",inline,") || f.Anonymous) {
		return "", true
	}
	if name == "" {
		name = f.Name
	}
	return name, false
}
