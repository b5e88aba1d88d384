// Package images builds container image tarballs without a container engine: a static binary on an
// empty base, written with go-containerregistry in the `docker save` format that both
// `ctr images import` and kind's node loader read. The project's machines have no engine and no
// registry, so every image a cluster runs is made this way.
package images

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/mlkube/mlkube/internal/repo"
)

// Builder writes image tarballs into OutDir. Go packages and scripts resolve against Root, the
// module root.
type Builder struct {
	Root   string
	OutDir string
	// Version, when set, is stamped into the Go binaries built from a Spec's Package (make images
	// passes the Makefile's VERSION); empty leaves them "dev".
	Version string
}

// RepoBuilder builds from the module root into _output/images, where make images puts the
// tarballs the clusters load.
func RepoBuilder() (Builder, error) {
	root, err := repo.Root()
	if err != nil {
		return Builder{}, err
	}
	out, err := repo.Output("images")
	return Builder{Root: root, OutDir: out}, err
}

// Build writes the image for s, for the machine's architecture, and returns the tarball's path.
func (b Builder) Build(ctx context.Context, s Spec) (string, error) {
	tag, err := name.NewTag(s.Ref)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", s.Ref, err)
	}
	img, err := b.Image(ctx, s, runtime.GOARCH)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(b.OutDir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(b.OutDir, TarballName(s.Ref))
	// Write next to the final path and rename, so a reader never sees half a tarball.
	if err := tarball.WriteToFile(out+".tmp", tag, img); err != nil {
		return "", fmt.Errorf("image %s: %w", s.Ref, err)
	}
	return out, os.Rename(out+".tmp", out)
}

// Image builds s for linux on arch, a GOARCH (amd64, arm64): a Go package is cross-compiled, a
// base layer script is asked for that architecture's layer (MLKUBE_IMAGE_ARCH), and the
// configuration names the platform. Prebuilt binaries and scripts' binaries are the machine's own,
// so they build for runtime.GOARCH only.
func (b Builder) Image(ctx context.Context, s Spec, arch string) (v1.Image, error) {
	tmp, err := os.MkdirTemp("", "mlkube-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin, err := s.binary(ctx, b.Root, tmp, b.Version, arch)
	if err != nil {
		return nil, fmt.Errorf("image %s for %s: %w", s.Ref, arch, err)
	}
	base, err := s.baseLayers(ctx, b.Root, arch)
	if err != nil {
		return nil, fmt.Errorf("image %s for %s: %w", s.Ref, arch, err)
	}
	img, err := imageOf(bin, s.dir(), s.Links, arch, base...)
	if err != nil {
		return nil, fmt.Errorf("image %s for %s: %w", s.Ref, arch, err)
	}
	return img, nil
}

// Index builds s for linux on each of archs and joins the images in a multi-platform index (a
// Docker manifest list, as the images are Docker manifests), each under its platform, so a node
// pulls its own architecture's.
func (b Builder) Index(ctx context.Context, s Spec, archs ...string) (v1.ImageIndex, error) {
	if len(archs) == 0 {
		return nil, fmt.Errorf("image %s: no architectures to build", s.Ref)
	}
	var adds []mutate.IndexAddendum
	for _, arch := range archs {
		img, err := b.Image(ctx, s, arch)
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: "linux", Architecture: arch},
		}})
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.DockerManifestList), adds...), nil
}

// TarballName is the file name of ref's tarball: "mlkube/manager:dev" → "mlkube_manager_dev.tar".
func TarballName(ref string) string {
	return strings.NewReplacer("/", "_", ":", "_").Replace(ref) + ".tar"
}

// basePath is the PATH of an image with a base layer, after the root.
const basePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// imageOf puts the binary, built for arch, in dir ("" for /) with its links on the base layers (or
// an empty base) and makes it the entrypoint.
func imageOf(bin, dir string, links []string, arch string, base ...v1.Layer) (v1.Image, error) {
	layer, err := binaryLayer(bin, dir, links)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, append(base, layer)...)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	// ctr import and the kubelet pick images by platform: say which this one is.
	cf.OS, cf.Architecture = "linux", arch
	cf.Config.Entrypoint = []string{path.Join("/", dir, filepath.Base(bin))}
	cf.Config.Env = []string{"PATH=/"}
	if len(base) > 0 {
		// A base's programs are where Debian puts them, sbin included (kube-proxy runs iptables).
		cf.Config.Env = []string{"PATH=/:" + basePath}
	}
	return mutate.ConfigFile(img, cf)
}
