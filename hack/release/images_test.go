package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

var testDigest = v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}

func TestImageName(t *testing.T) {
	for ref, want := range map[string]string{
		"mlkube/manager:dev":            "manager",
		"mlkube/runtime-python3.11:dev": "runtime-python3.11",
		"mlkube/transformer-md5":        "transformer-md5",
	} {
		if got, err := imageName(ref); err != nil || got != want {
			t.Errorf("imageName(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	for _, ref := range []string{"busybox:1", "other/manager:dev", "mlkube/:dev", "mlkube/x@sha256:" + testDigest.Hex} {
		if got, err := imageName(ref); err == nil {
			t.Errorf("imageName(%q) = %q, want an error", ref, got)
		}
	}
}

// Every released image has a name of its own, so no two are pushed to the same repository.
func TestReleasedNamesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range released() {
		n, err := imageName(s.Ref)
		if err != nil || seen[n] {
			t.Errorf("released image %s: name %q, %v (seen: %v)", s.Ref, n, err, seen[n])
		}
		seen[n] = true
	}
}

func TestManagerArgs(t *testing.T) {
	var pushed []pushedImage
	for _, s := range released() {
		pushed = append(pushed, pushedImage{DevRef: s.Ref, Ref: "r.example/" + strings.TrimPrefix(s.Ref, "mlkube/"), Digest: testDigest})
	}
	got, err := managerArgs(pins(pushed))
	if err != nil {
		t.Fatal(err)
	}
	at := "@" + testDigest.String()
	want := []string{"--io-shim-image=r.example/io-shim:dev" + at, "--code-runtime-image=python3.11=r.example/runtime-python3.11:dev" + at}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manager args (-want +got):\n%s", diff)
	}
	for _, missing := range []string{"mlkube/io-shim:dev", "mlkube/runtime-python3.11:dev"} {
		p := pins(pushed)
		delete(p, missing)
		if args, err := managerArgs(p); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("without %s: %v, %v; want an error naming it", missing, args, err)
		}
	}
}

func TestImageList(t *testing.T) {
	got := imageList([]pushedImage{
		{DevRef: "mlkube/manager:dev", Ref: "r.example/manager:v0.2.0", Digest: testDigest, Platforms: []string{"linux/amd64", "linux/arm64"}},
		{DevRef: "mlkube/io-shim:dev", Ref: "r.example/io-shim:v0.2.0", Digest: testDigest, Platforms: []string{"linux/amd64"}},
	})
	want := "r.example/manager:v0.2.0 " + testDigest.String() + " linux/amd64,linux/arm64\n" +
		"r.example/io-shim:v0.2.0 " + testDigest.String() + " linux/amd64\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images.txt (-want +got):\n%s", diff)
	}
}
