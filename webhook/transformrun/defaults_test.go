package transformrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// run returns a valid TransformRun of md5 over prefix raw into out, edited by edit.
func run(edit func(*v1alpha1.TransformRunSpec)) *v1alpha1.TransformRun {
	r := &v1alpha1.TransformRun{Spec: v1alpha1.TransformRunSpec{
		Transform:   "md5",
		Source:      v1alpha1.RunSource{Prefix: "raw"},
		Destination: v1alpha1.RunDestination{Prefix: "out"},
	}}
	r.Name, r.Namespace = "md5-raw", "default"
	if edit != nil {
		edit(&r.Spec)
	}
	return r
}

func TestDefault(t *testing.T) {
	cases := map[string]struct {
		spec v1alpha1.TransformRunSpec
		want v1alpha1.TransformRunSpec
	}{
		"workers per node": {
			spec: run(nil).Spec,
			want: run(func(s *v1alpha1.TransformRunSpec) { s.WorkersPerNode = ptr.To[int32](4) }).Spec,
		},
		"explicit workers are kept": {
			spec: run(func(s *v1alpha1.TransformRunSpec) { s.WorkersPerNode = ptr.To[int32](64) }).Spec,
			want: run(func(s *v1alpha1.TransformRunSpec) { s.WorkersPerNode = ptr.To[int32](64) }).Spec,
		},
		"trailing slashes of prefixes": {
			spec: run(func(s *v1alpha1.TransformRunSpec) { s.Source.Prefix, s.Destination.Prefix = "data/raw/", "out//" }).Spec,
			want: run(func(s *v1alpha1.TransformRunSpec) { s.Source.Prefix, s.WorkersPerNode = "data/raw", ptr.To[int32](4) }).Spec,
		},
		"the root stays for validation to refuse": {
			spec: run(func(s *v1alpha1.TransformRunSpec) { s.Source.Prefix, s.Destination.Prefix = "/", "//" }).Spec,
			want: run(func(s *v1alpha1.TransformRunSpec) {
				s.Source.Prefix, s.Destination.Prefix, s.WorkersPerNode = "/", "//", ptr.To[int32](4)
			}).Spec,
		},
		"objects and templates are left alone": {
			spec: run(func(s *v1alpha1.TransformRunSpec) {
				s.Source = v1alpha1.RunSource{Objects: []string{"a/"}, Template: "b/"}
			}).Spec,
			want: run(func(s *v1alpha1.TransformRunSpec) {
				s.Source, s.WorkersPerNode = v1alpha1.RunSource{Objects: []string{"a/"}, Template: "b/"}, ptr.To[int32](4)
			}).Spec,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := &v1alpha1.TransformRun{Spec: tc.spec}
			Default(r)
			if diff := cmp.Diff(tc.want, r.Spec); diff != "" {
				t.Errorf("Default() (-want +got):\n%s", diff)
			}
			again := r.DeepCopy()
			Default(again)
			if diff := cmp.Diff(r, again); diff != "" {
				t.Errorf("Default() is not idempotent (-once +twice):\n%s", diff)
			}
		})
	}
}
