// Command release builds every image mlkube ships for linux/amd64 and linux/arm64, pushes each as
// a multi-platform index to REGISTRY/<name>:VERSION, and writes _output/release/VERSION/:
// install.yaml with every image pinned by digest (the manager given its io shim and code runtime
// images the same way), values.yaml (the Helm chart's values for the same pinned images),
// images.txt (reference, digest and platforms of each pushed image), and krew/ (the plugins'
// archives, and krew manifests of VERSION whose uris name ARCHIVES_URL/<archive>, where the release
// publishes krew/archives/). make release runs it:
//
//	make release REGISTRY=registry.example/mlkube VERSION=v0.2.0
//	make release REGISTRY=registry.example/mlkube VERSION=v0.2.0 ARCHIVES_URL=https://downloads.example/mlkube/v0.2.0
//	RELEASE_INSECURE=1 make release REGISTRY=127.0.0.1:5000/mlkube VERSION=v0.2.0  # plain HTTP
//
// The images are built without an engine (e2e/images), the Python runtime from Debian's packages
// of each architecture (hack/build/python-runtime-image.sh). Pushing uses the credentials of `docker
// login` ($DOCKER_CONFIG or ~/.docker/config.json), if any.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/mlkube/mlkube/internal/images"
)

// config is what one release is.
type config struct {
	root     string // the module root
	out      string // the release goes into out/version
	registry string
	version  string
	insecure bool
	archs    []string
	// archivesURL is where the release's krew archives are published: the krew manifests' uris
	// are archivesURL/<archive>. Empty: the GitHub release of version (the manifests' own uris).
	archivesURL string
	// krew: build the plugins' archives and manifests into krew/. make e2e-release goes without:
	// it tests installing the release, and make krew-check the same scripts' archives.
	krew bool
}

func main() {
	c := config{}
	flag.StringVar(&c.registry, "registry", os.Getenv("REGISTRY"), "registry and path the images are pushed under: REGISTRY/<name>:VERSION (default $REGISTRY)")
	flag.StringVar(&c.version, "version", "", "the release, vX.Y.Z: the images' tag, stamped into every binary")
	flag.BoolVar(&c.insecure, "insecure", os.Getenv("RELEASE_INSECURE") == "1", "reach the registry over plain HTTP (default true when $RELEASE_INSECURE is 1)")
	archs := flag.String("arch", "amd64,arm64", "comma-separated architectures of every image (linux)")
	flag.StringVar(&c.archivesURL, "archives-url", os.Getenv("ARCHIVES_URL"), "http(s) URL the krew archives (krew/archives/*) are published under; the krew manifests' uris name it (default $ARCHIVES_URL, else "+githubReleases+"VERSION)")
	flag.StringVar(&c.out, "out", "_output/release", "directory the release's files go into, under VERSION/")
	flag.BoolVar(&c.krew, "krew", os.Getenv("RELEASE_KREW") != "0", "build the plugins' krew archives and manifests into krew/ (default true, false when $RELEASE_KREW is 0)")
	flag.Parse()
	c.archs = strings.Split(*archs, ",")
	var err error
	if c.root, err = os.Getwd(); err == nil {
		if !filepath.IsAbs(c.out) {
			c.out = filepath.Join(c.root, c.out)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		err = run(ctx, c)
		stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// semver is the form of a release: what the krew archives and the chart take too.
var semver = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// check fails on a configuration that could not make a release, before anything is built.
func (c config) check() error {
	if !semver.MatchString(c.version) {
		return fmt.Errorf("version %q is not semver with a leading v (e.g. v0.2.0)", c.version)
	}
	if c.registry == "" {
		return errors.New("no registry: make release REGISTRY=host/path VERSION=vX.Y.Z")
	}
	if _, err := name.NewRepository(c.registry+"/manager", c.nameOptions()...); err != nil {
		return fmt.Errorf("registry %q: %w", c.registry, err)
	}
	for _, a := range c.archs {
		if a != "amd64" && a != "arm64" {
			return fmt.Errorf("architecture %q: want amd64 or arm64", a)
		}
	}
	if c.archivesURL != "" {
		u, err := url.Parse(c.archivesURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("archives URL %q: want an http(s) URL with a host and no query, the directory the krew archives are published in (ARCHIVES_URL=https://host/path)", c.archivesURL)
		}
	}
	return nil
}

// githubReleases is where a release's krew archives are when ARCHIVES_URL does not say: the
// project's GitHub release of the version, the uris plugins/*.yaml carry.
const githubReleases = "https://github.com/mlkube/mlkube/releases/download/"

func (c config) nameOptions() []name.Option {
	if c.insecure {
		return []name.Option{name.Insecure}
	}
	return nil
}

// run makes the release: the bundle is rendered once with placeholder digests first, so that a
// bundle the release cannot pin fails before the images are built.
func run(ctx context.Context, c config) error {
	if err := c.check(); err != nil {
		return err
	}
	bundle, err := os.ReadFile(filepath.Join(c.root, "manifests", "install.yaml"))
	if err != nil {
		return err
	}
	var placeholders []pushedImage
	for _, s := range released() {
		placeholders = append(placeholders, pushedImage{DevRef: s.Ref, Ref: "registry.invalid/x:" + c.version})
	}
	if _, err := render(bundle, c.version, placeholders); err != nil {
		return fmt.Errorf("manifests/install.yaml: %w", err)
	}

	b := images.Builder{Root: c.root, Version: c.version}
	var pushed []pushedImage
	for _, s := range released() {
		fmt.Fprintf(os.Stderr, "release: building %s for %s\n", s.Ref, strings.Join(c.archs, ", "))
		p, err := publish(ctx, b, s, c.registry, c.version, c.archs, c.nameOptions()...)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "release: pushed %s\n", p.Pinned())
		pushed = append(pushed, p)
	}
	rendered, err := render(bundle, c.version, pushed)
	if err != nil {
		return fmt.Errorf("manifests/install.yaml: %w", err)
	}

	// Everything is written into a staging directory that replaces out/VERSION at the end, so a
	// failed release leaves no half of one behind.
	dest := filepath.Join(c.out, c.version)
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(c.out, "."+c.version+".")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	if err := os.WriteFile(filepath.Join(stage, "install.yaml"), rendered, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, "images.txt"), []byte(imageList(pushed)), 0o644); err != nil {
		return err
	}
	values, err := chartValues(c.version, pushed)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(stage, "values.yaml"), values, 0o644); err != nil {
		return err
	}
	if c.krew {
		if err := krew(ctx, c.root, filepath.Join(stage, "krew"), c.version, c.archivesURL); err != nil {
			return err
		}
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return err
	}
	if err := os.RemoveAll(dest); err != nil {
		return err
	}
	if err := os.Rename(stage, dest); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "release: %s in %s\n", c.version, dest)
	return nil
}

// render pins the bundle's images to pushed and gives the manager the pinned io shim and code
// runtimes.
func render(bundle []byte, version string, pushed []pushedImage) ([]byte, error) {
	p := pins(pushed)
	args, err := managerArgs(p)
	if err != nil {
		return nil, err
	}
	header := fmt.Sprintf("# mlkube %s: manifests/install.yaml with its images pinned by digest, by make release.\n", version)
	return renderBundle(bundle, header, p, images.Manager.Ref, args)
}

// krew writes the plugins' archives of version into dir/archives and plugins/*.yaml stamped with
// them into dir, with the scripts make krew runs; the committed plugins/*.yaml stay as they are.
func krew(ctx context.Context, root, dir, version, archivesURL string) error {
	archives := filepath.Join(dir, "archives")
	if err := script(ctx, root, nil, "archives.sh", archives, version); err != nil {
		return err
	}
	return stampKrew(ctx, root, dir, version, archivesURL, archives)
}

// stampKrew writes plugins/*.yaml into dir with version, each uri archivesURL/<archive> (the GitHub
// release of version when archivesURL is empty) and the sha256s of archives/SHA256SUMS.
func stampKrew(ctx context.Context, root, dir, version, archivesURL, archives string) error {
	manifests, err := filepath.Glob(filepath.Join(root, "plugins", "*.yaml"))
	if err != nil {
		return err
	}
	if len(manifests) == 0 {
		return errors.New("no plugins/*.yaml to stamp")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	copies := []string{}
	for _, m := range manifests {
		data, err := os.ReadFile(m)
		if err != nil {
			return err
		}
		cp := filepath.Join(dir, filepath.Base(m))
		if err := os.WriteFile(cp, data, 0o644); err != nil {
			return err
		}
		copies = append(copies, cp)
	}
	return script(ctx, root, []string{"KREW_URL=" + archivesURL}, "manifests.sh", append([]string{version, archives}, copies...)...)
}

// script runs hack/release/krew/name with args in root, env added to this process's.
func script(ctx context.Context, root string, env []string, name string, args ...string) error {
	c := exec.CommandContext(ctx, filepath.Join(root, "hack/release/krew", name), args...)
	c.Dir, c.Stdout, c.Stderr = root, os.Stderr, os.Stderr
	c.Env = append(os.Environ(), env...)
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
