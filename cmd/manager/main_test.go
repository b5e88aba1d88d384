package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/wire"
)

func parseImageFlags(args ...string) (wire.PodImages, error) {
	images := wire.DefaultPodImages()
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindImageFlags(fs, &images)
	return images, fs.Parse(args)
}

func TestImageFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args    []string
		want    wire.PodImages
		wantErr bool
	}{
		"defaults are the development images": {want: wire.DefaultPodImages()},
		"release images": {
			args: []string{"--io-shim-image=reg.example/mlkube/io-shim:v0.2.0@sha256:abc",
				"--code-runtime-image=python3.11=reg.example/mlkube/runtime-python3.11:v0.2.0@sha256:def"},
			want: wire.PodImages{IOShim: "reg.example/mlkube/io-shim:v0.2.0@sha256:abc",
				CodeRuntimes: map[string]string{"python3.11": "reg.example/mlkube/runtime-python3.11:v0.2.0@sha256:def"}},
		},
		"the last of a runtime's images wins": {
			args: []string{"--code-runtime-image=python3.11=a/py:1", "--code-runtime-image=python3.11=b/py:2"},
			want: wire.PodImages{IOShim: wire.IOShimImage, CodeRuntimes: map[string]string{"python3.11": "b/py:2"}},
		},
		"a runtime the API does not have": {args: []string{"--code-runtime-image=python3.13=a/py:3.13"}, wantErr: true},
		"no image":                        {args: []string{"--code-runtime-image=python3.11"}, wantErr: true},
		"an empty io shim image":          {args: []string{"--io-shim-image="}, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parseImageFlags(tc.args...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parse %v: error %v, want error %v", tc.args, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

func TestImageFlagsUsageNamesDefaults(t *testing.T) {
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	images := wire.DefaultPodImages()
	bindImageFlags(fs, &images)
	if got, want := fs.Lookup("code-runtime-image").Usage, "python3.11=mlkube/runtime-python3.11:dev"; !strings.Contains(got, want) {
		t.Errorf("usage %q does not name the default %q", got, want)
	}
}
