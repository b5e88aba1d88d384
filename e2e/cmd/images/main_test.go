package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/internal/images"
)

func TestSelectSpecs(t *testing.T) {
	a := images.Spec{Ref: "mlkube/a:dev", Package: "./a"}
	b := images.Spec{Ref: "mlkube/b:dev", Package: "./b"}
	for name, tc := range map[string]struct {
		refs    []string
		want    []images.Spec
		wantErr bool
	}{
		"no refs: all":       {want: []images.Spec{a, b}},
		"in the given order": {refs: []string{"mlkube/b:dev", "mlkube/a:dev"}, want: []images.Spec{b, a}},
		"unknown ref":        {refs: []string{"mlkube/c:dev"}, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := selectSpecs([]images.Spec{a, b}, tc.refs)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("specs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChooseSpecs(t *testing.T) {
	table := []images.Spec{{Ref: "mlkube/a:dev", Package: "./a"}}
	got, err := chooseSpecs(table, images.Spec{Binary: "/b/kube-proxy", Dir: "/usr/local/bin"}, []string{"registry.k8s.io/kube-proxy:v1"})
	want := []images.Spec{{Ref: "registry.k8s.io/kube-proxy:v1", Binary: "/b/kube-proxy", Dir: "/usr/local/bin"}}
	if err != nil || !cmp.Equal(want, got) {
		t.Errorf("ad hoc image: %v, %v; want %v", got, err, want)
	}
	if got, err := chooseSpecs(table, images.Spec{}, nil); err != nil || !cmp.Equal(table, got) {
		t.Errorf("no binary: %v, %v; want the table", got, err)
	}
	for name, tc := range map[string]struct {
		adhoc images.Spec
		refs  []string
	}{
		"binary without a ref":   {images.Spec{Binary: "/b/x"}, nil},
		"binary with two refs":   {images.Spec{Binary: "/b/x"}, []string{"a:1", "b:1"}},
		"dir without binary":     {images.Spec{Dir: "/usr"}, []string{"mlkube/a:dev"}},
		"base without binary":    {images.Spec{BaseLayerScript: "x.sh"}, nil},
		"table ref not in table": {images.Spec{}, []string{"mlkube/z:dev"}},
	} {
		if _, err := chooseSpecs(table, tc.adhoc, tc.refs); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
