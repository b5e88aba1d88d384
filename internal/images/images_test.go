package images

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// moduleRoot is where go build and scripts run from: two levels above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readBack reads the image ref from the tarball at path as ctr would: the image, its configuration
// and the mode of every file of its flattened filesystem, by name.
func readBack(t *testing.T, path, ref string) (v1.Image, *v1.ConfigFile, map[string]int64) {
	t.Helper()
	img, cf, err := readImage(path, ref)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]int64{}
	if err := eachFile(img, func(h *tar.Header, _ io.Reader) error {
		files[h.Name] = h.Mode
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return img, cf, files
}

// TestBuildPrebuiltBinary: a binary given by path lands at /<its name>, as the entrypoint.
func TestBuildPrebuiltBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := Builder{Root: moduleRoot(t), OutDir: t.TempDir()}
	path, err := b.Build(context.Background(), Spec{Ref: "mlkube/tool:1", Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	_, cf, _ := readBack(t, path, "mlkube/tool:1")
	if diff := cmp.Diff([]string{"/tool"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
}

// TestBuildIntoADirectory: a Spec's Dir holds the binary, with its parents as directories, and its
// links, and the entrypoint names it there.
func TestBuildIntoADirectory(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kube-proxy")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := Builder{Root: moduleRoot(t), OutDir: t.TempDir()}
	path, err := b.Build(context.Background(), Spec{Ref: "registry.k8s.io/kube-proxy:v1", Binary: bin, Dir: "/usr/local/bin/", Links: []string{"kp"}})
	if err != nil {
		t.Fatal(err)
	}
	_, cf, files := readBack(t, path, "registry.k8s.io/kube-proxy:v1")
	if diff := cmp.Diff([]string{"/usr/local/bin/kube-proxy"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	for name, mode := range map[string]int64{"usr": 0o755, "usr/local": 0o755, "usr/local/bin": 0o755, "usr/local/bin/kube-proxy": 0o755, "usr/local/bin/kp": 0o777} {
		if got, ok := files[name]; !ok || got != mode {
			t.Errorf("file %s: mode %o, present %v; want %o", name, got, ok, mode)
		}
	}
	if _, ok := files["kube-proxy"]; ok {
		t.Error("the binary is also at the root")
	}
}

// TestBuildStampsVersion: make images passes VERSION, and the image's binary reports it.
func TestBuildStampsVersion(t *testing.T) {
	b := Builder{Root: moduleRoot(t), OutDir: t.TempDir(), Version: "v9.8.7-test"}
	path, err := b.Build(context.Background(), IOShim)
	if err != nil {
		t.Fatal(err)
	}
	rootfs := t.TempDir()
	if _, err := Unpack(path, IOShim.Ref, rootfs); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(rootfs, "io-shim"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("io-shim --version: %v\n%s", err, out)
	}
	if want := "io-shim v9.8.7-test (go"; !strings.HasPrefix(string(out), want) {
		t.Errorf("io-shim --version printed %q, want it to start with %q", out, want)
	}
}

// TestBuildGoPackage builds the pause image for real and reads the tarball back as ctr would.
func TestBuildGoPackage(t *testing.T) {
	b := Builder{Root: moduleRoot(t), OutDir: t.TempDir()}
	path, err := b.Build(context.Background(), Pause)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(b.OutDir, "mlkube_pause_dev.tar"); path != want {
		t.Errorf("path = %s, want %s", path, want)
	}
	_, cf, files := readBack(t, path, Pause.Ref)
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform = %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if diff := cmp.Diff([]string{"/pause"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if files["pause"]&0o111 == 0 {
		t.Errorf("image files %v: want an executable /pause", files)
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
}

func TestBuildErrors(t *testing.T) {
	for name, s := range map[string]Spec{
		"bad reference":       {Ref: "UPPER/case:dev", Package: "./e2e/images/pause"},
		"no source":           {Ref: "mlkube/x:dev"},
		"two sources":         {Ref: "mlkube/x:dev", Package: "./e2e/images/pause", Script: "hack/build/pinned.sh", Args: []string{"coredns"}},
		"package not found":   {Ref: "mlkube/x:dev", Package: "./e2e/images/nonexistent"},
		"binary not found":    {Ref: "mlkube/x:dev", Binary: "/nonexistent/bin"},
		"script fails to run": {Ref: "mlkube/x:dev", Script: "hack/nonexistent.sh"},
		"base layer fails":    {Ref: "mlkube/x:dev", Package: "./e2e/images/pause", BaseLayerScript: "hack/nonexistent.sh"},
	} {
		t.Run(name, func(t *testing.T) {
			b := Builder{Root: moduleRoot(t), OutDir: t.TempDir()}
			if path, err := b.Build(context.Background(), s); err == nil {
				t.Errorf("Build = %s, want an error", path)
			}
		})
	}
}

func TestTarballName(t *testing.T) {
	for ref, want := range map[string]string{
		"mlkube/manager:dev":       "mlkube_manager_dev.tar",
		"mlkube/coredns:v1.15.0":   "mlkube_coredns_v1.15.0.tar",
		"localhost:5000/a/b:1.2.3": "localhost_5000_a_b_1.2.3.tar",
	} {
		if got := TarballName(ref); got != want {
			t.Errorf("TarballName(%q) = %q, want %q", ref, got, want)
		}
	}
}

// TestTableIsBuildable: every entry names exactly one source and a valid, distinct reference.
func TestTableIsBuildable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if _, err := name.NewTag(s.Ref); err != nil {
			t.Errorf("%s: %v", s.Ref, err)
		}
		if s.sources() != 1 {
			t.Errorf("%s: want exactly one source", s.Ref)
		}
		if seen[TarballName(s.Ref)] {
			t.Errorf("%s: tarball name clashes with another entry", s.Ref)
		}
		seen[TarballName(s.Ref)] = true
	}
}

// TestBuildWithBaseLayer: the layer a BaseLayerScript names, given its BaseLayerArgs, goes below
// the binary, and PATH reaches its programs.
func TestBuildWithBaseLayer(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nset -e\n[ \"$1\" = hello ]\nmkdir -p base/usr/bin\necho hi > base/usr/bin/$1\n" +
		"tar -C base -cf base.tar usr\necho building >&2\necho \"$PWD/base.tar\"\n"
	if err := os.WriteFile(filepath.Join(root, "base.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b := Builder{Root: root, OutDir: t.TempDir()}
	path, err := b.Build(context.Background(), Spec{Ref: "mlkube/tool:1", Binary: bin, BaseLayerScript: "base.sh", BaseLayerArgs: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	img, cf, files := readBack(t, path, "mlkube/tool:1")
	if layers, err := img.Layers(); err != nil || len(layers) != 2 {
		t.Errorf("layers = %d, %v; want the base and the binary", len(layers), err)
	}
	if diff := cmp.Diff([]string{"PATH=/:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, cf.Config.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	_, hello := files["usr/bin/hello"]
	_, tool := files["tool"]
	if !hello || !tool {
		t.Errorf("image files %v: want usr/bin/hello and tool", files)
	}

	dir := t.TempDir()
	if _, err := Unpack(path, "mlkube/tool:1", dir); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "usr/bin/hello")); err != nil || string(b) != "hi\n" {
		t.Errorf("unpacked usr/bin/hello = %q, %v", b, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "tool")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("unpacked tool: %v, %v; want mode 0755", fi, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 {
		t.Errorf("unpacked tmp: %v, %v; want a sticky directory", fi, err)
	}
}

// TestUnpackStaysInside: an absolute symlink in an image is not followed out of the directory
// when a later entry writes the same name.
func TestUnpackStaysInside(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("safe"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	entries := []tar.Header{
		{Name: "link", Typeflag: tar.TypeSymlink, Linkname: outside},
		{Name: "link", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4},
	}
	for _, h := range entries {
		if err := unpackEntry(root, &h, strings.NewReader("evil")); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "safe" {
		t.Errorf("file outside the directory was overwritten: %q", b)
	}
}

// TestVersionsArePinned: each image built from a pinned module is tagged with the release that
// module makes, so a change of pins cannot leave an image named for another version.
func TestVersionsArePinned(t *testing.T) {
	for name, tc := range map[string]struct {
		moddir, module, version string
	}{
		"CoreDNS":        {"hack/build/coredns", "github.com/coredns/coredns", CoreDNSVersion},
		"metrics-server": {"hack/build/metrics-server", "sigs.k8s.io/metrics-server", MetricsServerVersion},
		"versitygw":      {"hack/build/versitygw", "github.com/versity/versitygw", VersityGWVersion},
		"Kueue":          {"hack/build/kueue", "sigs.k8s.io/kueue", KueueVersion},
		// The manager links Kueue's API and e2e/cluster installs its manifests from this one.
		"Kueue (mlkube)": {".", "sigs.k8s.io/kueue", KueueVersion},
	} {
		t.Run(name, func(t *testing.T) {
			mod, err := os.ReadFile(filepath.Join(moduleRoot(t), tc.moddir, "go.mod"))
			if err != nil {
				t.Fatal(err)
			}
			want := tc.module + " " + tc.version
			for _, line := range strings.Split(string(mod), "\n") {
				line, _, _ = strings.Cut(line, "//")
				if strings.TrimSpace(strings.TrimPrefix(line, "require ")) == want {
					return
				}
			}
			t.Errorf("%s/go.mod does not require %q; set the version in table.go to the pinned release", tc.moddir, want)
		})
	}
}

// TestIndexHasEachPlatform builds the pause image for amd64 and arm64 into one index: each
// platform's manifest is listed under its platform, its configuration names it, and its binary is
// compiled for it.
func TestIndexHasEachPlatform(t *testing.T) {
	b := Builder{Root: moduleRoot(t)}
	idx, err := b.Index(context.Background(), Pause, "amd64", "arm64")
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != types.DockerManifestList {
		t.Errorf("index media type %s, want %s", im.MediaType, types.DockerManifestList)
	}
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	var platforms []string
	for _, desc := range im.Manifests {
		platforms = append(platforms, desc.Platform.OS+"/"+desc.Platform.Architecture)
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != "linux" || cf.Architecture != desc.Platform.Architecture {
			t.Errorf("%s: configuration says %s/%s", desc.Platform.Architecture, cf.OS, cf.Architecture)
		}
		var machine elf.Machine
		if err := eachFile(img, func(h *tar.Header, body io.Reader) error {
			if h.Name != "pause" {
				return nil
			}
			data, err := io.ReadAll(body)
			if err != nil {
				return err
			}
			f, err := elf.NewFile(bytes.NewReader(data))
			if err != nil {
				return err
			}
			machine = f.Machine
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if want := machines[desc.Platform.Architecture]; machine != want {
			t.Errorf("%s: /pause is built for %v, want %v", desc.Platform.Architecture, machine, want)
		}
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
}

// TestImageOfAnotherArchNeedsAPackage: a prebuilt binary is the machine's, so asking for another
// architecture is an error rather than an image that cannot run there.
func TestImageOfAnotherArchNeedsAPackage(t *testing.T) {
	other := map[string]string{"amd64": "arm64", "arm64": "amd64"}[runtime.GOARCH]
	b := Builder{Root: moduleRoot(t)}
	if _, err := b.Image(context.Background(), Spec{Ref: "mlkube/x:dev", Binary: "/bin/true"}, other); err == nil {
		t.Errorf("Image(binary, %s) = nil error, want one: a prebuilt binary builds for %s only", other, runtime.GOARCH)
	}
	if _, err := b.Index(context.Background(), Pause); err == nil {
		t.Error("Index with no architectures: want an error")
	}
}
