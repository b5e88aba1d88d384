package wire

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// The webhook admits the runtimes of v1alpha1.CodeRuntimes; each must have an image, and no image
// may exist for a runtime the webhook refuses.
func TestCodeRuntimesHaveImages(t *testing.T) {
	if diff := cmp.Diff(slices.Sorted(slices.Values(v1alpha1.CodeRuntimes)), CodeRuntimeNames()); diff != "" {
		t.Errorf("v1alpha1.CodeRuntimes and the runtime images differ (-admitted +images):\n%s", diff)
	}
	if img, err := CodeRuntimeImage("python3.11"); err != nil || img != "mlkube/runtime-python3.11:dev" {
		t.Errorf("CodeRuntimeImage(python3.11) = %q, %v", img, err)
	}
	if img, err := CodeRuntimeImage("python3.13"); err == nil {
		t.Errorf("CodeRuntimeImage(python3.13) = %q, want an error naming the supported runtimes", img)
	}
}

func TestIOShimCommands(t *testing.T) {
	if diff := cmp.Diff([]string{"/io-shim", "install", "/mlkube/bin/io-shim"}, IOShimInstallCommand()); diff != "" {
		t.Errorf("IOShimInstallCommand (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/mlkube/bin/io-shim", "--", "tr", "a", "b"}, IOShimCommand(false, "tr", "a", "b")); diff != "" {
		t.Errorf("IOShimCommand (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/mlkube/bin/io-shim", "--persistent", "--", "md5"}, IOShimCommand(true, "md5")); diff != "" {
		t.Errorf("IOShimCommand persistent (-want +got):\n%s", diff)
	}
}

func TestPodImagesOverrides(t *testing.T) {
	p := DefaultPodImages()
	if p.IOShim != IOShimImage {
		t.Errorf("default io shim %q, want %q", p.IOShim, IOShimImage)
	}
	pinned := "reg.example/mlkube/runtime-python3.11:v0.2.0@sha256:" + strings.Repeat("a", 64)
	if err := p.SetCodeRuntime("python3.11=" + pinned); err != nil {
		t.Fatal(err)
	}
	if err := p.SetIOShim("reg.example/mlkube/io-shim:v0.2.0"); err != nil {
		t.Fatal(err)
	}
	want := PodImages{IOShim: "reg.example/mlkube/io-shim:v0.2.0", CodeRuntimes: map[string]string{"python3.11": pinned}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("overridden images (-want +got):\n%s", diff)
	}
	if img, err := p.CodeRuntime("python3.11"); err != nil || img != pinned {
		t.Errorf("CodeRuntime(python3.11) = %q, %v; want the override", img, err)
	}
	// The defaults are not shared with an overridden copy.
	if img, _ := CodeRuntimeImage("python3.11"); img != "mlkube/runtime-python3.11:dev" {
		t.Errorf("the default changed with an override: %q", img)
	}
}

func TestPodImagesRejects(t *testing.T) {
	for name, spec := range map[string]string{
		"no image":         "python3.11=",
		"no separator":     "python3.11",
		"unknown runtime":  "python3.13=reg.example/py:3.13",
		"empty runtime":    "=reg.example/py:3.11",
		"space in image":   "python3.11=reg.example/py 3.11",
		"names only":       "python3.11,python3.13",
		"runtime as image": "reg.example/py:3.11",
	} {
		p := DefaultPodImages()
		if err := p.SetCodeRuntime(spec); err == nil {
			t.Errorf("%s: SetCodeRuntime(%q) = nil, want an error", name, spec)
		}
		if diff := cmp.Diff(DefaultPodImages(), p); diff != "" {
			t.Errorf("%s: a refused override changed the images:\n%s", name, diff)
		}
	}
	p := DefaultPodImages()
	if err := p.SetIOShim(""); err == nil || p.IOShim != IOShimImage {
		t.Errorf("SetIOShim(\"\") = %v, image %q; want an error and the default kept", err, p.IOShim)
	}
}
