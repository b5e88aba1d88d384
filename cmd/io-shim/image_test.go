package main

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/images"
	"github.com/mlkube/mlkube/runtimes/runtimetest"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// TestImage plays the pod the controller renders for an `io` transformer, without a cluster: the
// init container's command runs chrooted in the unpacked mlkube/io-shim:dev (no shell, no cp) and
// installs the shim into the shared volume; the transformer container then serves a command
// through the installed copy.
func TestImage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to chroot into the unpacked image")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tarPath, err := images.Builder{Root: root, OutDir: t.TempDir()}.Build(t.Context(), images.IOShim)
	if err != nil {
		t.Fatal(err)
	}
	rootfs := t.TempDir()
	if _, err := images.Unpack(tarPath, images.IOShim.Ref, rootfs); err != nil {
		t.Fatal(err)
	}
	// The emptyDir volume, mounted at wire.IOShimMountPath.
	volume := filepath.Join(rootfs, wire.IOShimMountPath)
	if err := os.MkdirAll(volume, 0o755); err != nil {
		t.Fatal(err)
	}
	install := wire.IOShimInstallCommand()
	cmd := exec.Command(install[0], install[1:]...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("init container %v: %v\n%s", install, err, out)
	}
	installed := filepath.Join(volume, filepath.Base(wire.IOShimBinPath))
	fi, err := os.Stat(installed)
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("installed shim: %v, %v; want mode 0755", fi, err)
	}

	// The transformer container: the volume holds the shim, the image the user's command.
	command := wire.IOShimCommand(false, "sh", "-c", `[ "$MLKUBE_ARGS" = fail ] && { echo bad >&2; exit 4; }; tr a-z A-Z`)
	shim := exec.Command(installed, command[1:]...)
	tokenFile := filepath.Join(t.TempDir(), "token")
	_, client := runtimetest.Token(t, shim, tokenFile, tokenFile)
	url := runtimetest.Serve(t, shim)
	put := func(args, body string) (string, error) {
		var out bytes.Buffer
		err := transformertest.DoHTTP(t.Context(), client, http.MethodPut,
			wire.ObjectURL(url, "a/b", wire.Query{Args: args}), strings.NewReader(body), &out)
		return out.String(), err
	}
	if got, err := put("", "hello"); err != nil || got != "HELLO" {
		t.Errorf("PUT = %q, %v; want HELLO", got, err)
	}
	_, err = put("fail", "x")
	if re, ok := errors.AsType[*transformertest.RemoteError](err); !ok || re.Message != "sh exited with status 4; stderr:\nbad" {
		t.Errorf("failing object: %v", err)
	}
}
