package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/images"
)

// released are the images a release ships: what install.yaml runs, what the manager puts into
// transformer pods, and the example transformers. The e2e harness's images are not among them.
func released() []images.Spec {
	return []images.Spec{images.Manager, images.NodeAgent, images.IOShim, images.RuntimePython311,
		images.TransformerEcho, images.TransformerMD5, images.TransformerGzip}
}

// imageName is the name a released image is pushed under, below the registry: "manager" for
// mlkube/manager:dev.
func imageName(devRef string) (string, error) {
	repo, _, _ := strings.Cut(devRef, ":")
	n, ok := strings.CutPrefix(repo, "mlkube/")
	if !ok || n == "" || strings.Contains(devRef, "@") {
		return "", fmt.Errorf("image %q is not mlkube/<name>:<tag>", devRef)
	}
	return n, nil
}

// pushedImage is one image of a release as the registry holds it.
type pushedImage struct {
	// DevRef is the development reference the bundle and the manager's defaults name.
	DevRef string
	// Ref is where it was pushed: REGISTRY/<name>:VERSION.
	Ref string
	// Digest is the index's.
	Digest v1.Hash
	// Platforms are the index's, os/arch.
	Platforms []string
}

// Pinned is the reference a release's bundle names: the tag for people, the digest for nodes.
func (p pushedImage) Pinned() string { return p.Ref + "@" + p.Digest.String() }

// pins maps each pushed image's development reference to its pinned one.
func pins(pushed []pushedImage) map[string]string {
	m := map[string]string{}
	for _, p := range pushed {
		m[p.DevRef] = p.Pinned()
	}
	return m
}

// managerArgs are the flags that make the manager start transformer pods from the pinned io shim
// and code runtimes; every runtime the API names must have been pushed.
func managerArgs(pins map[string]string) ([]string, error) {
	shim, ok := pins[wire.IOShimImage]
	if !ok {
		return nil, fmt.Errorf("the io shim's image %s is not among the released images", wire.IOShimImage)
	}
	args := []string{"--io-shim-image=" + shim}
	for _, rt := range wire.CodeRuntimeNames() {
		dev, err := wire.CodeRuntimeImage(rt)
		if err != nil {
			return nil, err
		}
		pinned, ok := pins[dev]
		if !ok {
			return nil, fmt.Errorf("code runtime %s's image %s is not among the released images", rt, dev)
		}
		args = append(args, "--code-runtime-image="+rt+"="+pinned)
	}
	return args, nil
}

// imageList is images.txt: a line per pushed image with its reference, digest and platforms.
func imageList(pushed []pushedImage) string {
	var b strings.Builder
	for _, p := range pushed {
		fmt.Fprintf(&b, "%s %s %s\n", p.Ref, p.Digest, strings.Join(p.Platforms, ","))
	}
	return b.String()
}

// publish builds s for linux on each of archs and pushes the index as registry/<name>:version.
func publish(ctx context.Context, b images.Builder, s images.Spec, registry, version string, archs []string, opts ...name.Option) (pushedImage, error) {
	n, err := imageName(s.Ref)
	if err != nil {
		return pushedImage{}, err
	}
	tag, err := name.NewTag(registry+"/"+n+":"+version, opts...)
	if err != nil {
		return pushedImage{}, fmt.Errorf("image %s: %w", n, err)
	}
	idx, err := b.Index(ctx, s, archs...)
	if err != nil {
		return pushedImage{}, err
	}
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return pushedImage{}, fmt.Errorf("pushing %s: %w", tag, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return pushedImage{}, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return pushedImage{}, err
	}
	p := pushedImage{DevRef: s.Ref, Ref: tag.String(), Digest: digest}
	for _, m := range im.Manifests {
		p.Platforms = append(p.Platforms, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	return p, nil
}
