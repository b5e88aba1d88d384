package main

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/mlkube/mlkube/internal/images"
)

// TestPublishToARegistry builds the manager-sized stand-in (the pause image) for both
// architectures, pushes it to an in-process registry, and reads the index back: both platforms
// are there, the digest is the one publish reports, and a bundle rendered from it names it.
func TestPublishToARegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	reg := u.Host + "/mlkube"
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b := images.Builder{Root: root, Version: "v0.2.0"}
	// Pushed under the manager's name, so that the bundle below pins it.
	spec := images.Pause
	spec.Ref = images.Manager.Ref
	ctx := context.Background()
	p, err := publish(ctx, b, spec, reg, "v0.2.0", []string{"amd64", "arm64"}, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if want := reg + "/manager:v0.2.0"; p.Ref != want {
		t.Errorf("pushed to %s, want %s", p.Ref, want)
	}

	ref, err := name.ParseReference(p.Pinned(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("reading the pushed index back: %v", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, m := range im.Manifests {
		platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
		img, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if cf, err := img.ConfigFile(); err != nil || cf.Architecture != m.Platform.Architecture {
			t.Errorf("%s: configuration %+v, %v", m.Platform.Architecture, cf, err)
		}
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("pushed platforms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(platforms, p.Platforms); diff != "" {
		t.Errorf("publish reports platforms (-registry +reported):\n%s", diff)
	}
	tagged, err := remote.Index(must(name.NewTag(p.Ref, name.Insecure)), remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := tagged.Digest(); err != nil || d != p.Digest {
		t.Errorf("the tag names %v (%v), publish reports %v", d, err, p.Digest)
	}

	bundle := []byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: mlkube/manager:dev\n")
	got, err := renderBundle(bundle, "", pins([]pushedImage{p}), images.Manager.Ref, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "image: " + reg + "/manager:v0.2.0@" + p.Digest.String(); !strings.Contains(string(got), want) {
		t.Errorf("rendered bundle:\n%s\nwant it to name %s", got, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
