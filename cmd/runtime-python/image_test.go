package main

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/images"
	"github.com/mlkube/mlkube/runtimes/python"
	"github.com/mlkube/mlkube/runtimes/runtimetest"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// debianPackages are what hack/build/python-runtime-image.sh collects into the image.
var debianPackages = []string{"python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib"}

// TestImage builds mlkube/runtime-python3.11:dev as `make images` does, unpacks its layers into a
// directory and runs its entrypoint chrooted there, as a container would without the isolation:
// the image must hold everything the runtime and Python need.
func TestImage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to chroot into the unpacked image")
	}
	for _, p := range debianPackages {
		out, _ := exec.Command("dpkg-query", "-W", "-f=${db:Status-Abbrev}", p).Output()
		if !strings.HasPrefix(string(out), "ii") {
			t.Skipf("Debian package %s is not installed: run hack/build/python-runtime-image.sh as root, "+
				"or apt-get install -y %s", p, strings.Join(debianPackages, " "))
		}
	}
	rootfs, cf := buildAndUnpack(t)

	t.Run("transforms", func(t *testing.T) {
		src := `import hashlib, json, zlib
def transform(data):
    return json.dumps({"md5": hashlib.md5(data).hexdigest(), "zlen": len(zlib.compress(data))}).encode()
`
		cmd := entrypoint(rootfs, cf, python.EnvSource+"="+src)
		_, client := runtimetest.Token(t, cmd, filepath.Join(rootfs, "token"), "/token")
		url := runtimetest.Serve(t, cmd)
		var got bytes.Buffer
		err := transformertest.DoHTTP(t.Context(), client, http.MethodPut,
			wire.ObjectURL(url, "dir/object", wire.Query{}), strings.NewReader("hello"), &got)
		want := `{"md5": "5d41402abc4b2a76b9719d911017c592", "zlen": 13}`
		if err != nil || got.String() != want {
			t.Errorf("PUT = %q, %v; want %q", got.String(), err, want)
		}
	})
	for name, tc := range map[string]struct {
		env  []string
		want string
	}{
		"bad source":   {[]string{python.EnvSource + "=def transform(b)\n"}, "MLKUBE_CODE_SOURCE does not compile"},
		"no function":  {[]string{python.EnvSource + "=x = 1\n"}, "MLKUBE_CODE_SOURCE defines no 'transform'"},
		"dependencies": {[]string{python.EnvSource + "=def transform(b): return b\n", python.EnvDependencies + "=numpy\n"}, "MLKUBE_CODE_DEPENDENCIES is set, but pip is not available"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := entrypoint(rootfs, cf, append(tc.env, wire.EnvPort+"=0")...)
			out, err := cmd.CombinedOutput()
			if exit, ok := errors.AsType[*exec.ExitError](err); !ok || exit.ExitCode() != 1 {
				t.Errorf("exit: %v, want status 1", err)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

// buildAndUnpack builds the image and unpacks its filesystem; it returns the directory and the
// image's configuration.
func buildAndUnpack(t *testing.T) (string, *v1.ConfigFile) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	spec := images.RuntimePython311
	tarPath, err := images.Builder{Root: root, OutDir: t.TempDir()}.Build(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s in %v", spec.Ref, time.Since(start).Round(time.Millisecond))
	rootfs := t.TempDir()
	cf, err := images.Unpack(tarPath, spec.Ref, rootfs)
	if err != nil {
		t.Fatal(err)
	}
	return rootfs, cf
}

// entrypoint is the image's entrypoint chrooted into rootfs, with the image's environment and env.
func entrypoint(rootfs string, cf *v1.ConfigFile, env ...string) *exec.Cmd {
	ep := append(cf.Config.Entrypoint, cf.Config.Cmd...)
	cmd := exec.Command(ep[0], ep[1:]...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs}
	cmd.Env = slices.Concat(cf.Config.Env, env)
	return cmd
}
