package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/e2e/images"
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
