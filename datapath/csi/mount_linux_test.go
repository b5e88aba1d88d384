package csi

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/internal/mountinfo"
)

// mountOptions returns the per-mount options of each mount on target in /proc/self/mountinfo,
// one entry per mount stacked there.
func mountOptions(t *testing.T, target string) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var opts []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) > 5 && mountinfo.Unescape(fields[4]) == target {
			opts = append(opts, fields[5])
		}
	}
	return opts
}

// wantReadOnly fails unless the per-mount options of what carry ro, nosuid, nodev and noexec.
func wantReadOnly(t *testing.T, what, options string) {
	t.Helper()
	for _, o := range []string{"ro", "nosuid", "nodev", "noexec"} {
		if !slices.Contains(strings.Split(options, ","), o) {
			t.Errorf("%s has options %s, lacking %s", what, options, o)
		}
	}
}

// realDriver is a driver that really mounts, on a temporary kubelet directory and data root, for
// the fqn transformer pod of each of namespaces (its UID is the namespace's name). It skips the
// test unless it runs as root, which mount(2) needs.
func realDriver(t *testing.T, namespaces ...string) (*Driver, Options) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	var objs []client.Object
	for _, ns := range namespaces {
		pod, tr := testPod(), testTransformObj()
		pod.Namespace, tr.Namespace, pod.UID = ns, ns, types.UID(ns)
		objs = append(objs, pod, tr)
	}
	opts := testOptions(t, SystemMounter{}, objs...)
	opts.UID, opts.GID = 65532, 65532
	d, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return d, opts
}

// publishFor publishes the volume of namespace ns's pod (realDriver) and returns its request; the
// test's end removes whatever is still mounted on its target.
func publishFor(t *testing.T, d *Driver, opts Options, ns string) (*csi.NodePublishVolumeRequest, error) {
	t.Helper()
	pod := testPod()
	pod.Namespace, pod.UID = ns, types.UID(ns)
	req := publishRequest(opts.KubeletDir, pod)
	makeParent(t, req.TargetPath)
	t.Cleanup(func() { _ = SystemMounter{}.Unmount(req.TargetPath) })
	_, err := d.NodePublishVolume(context.Background(), req)
	return req, err
}

// TestRealMount: the mount shows the pod's namespace directory alone, read-only, and nothing in
// it executes; publishing and unpublishing again change nothing; and no mount is left.
func TestRealMount(t *testing.T) {
	d, opts := realDriver(t, testNS)
	for ns, files := range map[string]map[string]string{
		testNS:     {"obj": "tenant a's object", "run.sh": "#!/bin/sh\nexit 0\n"},
		"tenant-b": {"secret": "tenant b's object"},
	} {
		if err := os.Mkdir(filepath.Join(opts.DataRoot, ns), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(opts.DataRoot, ns, name), []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A mount under the namespace's directory stays out of the pod's: the bind is not recursive.
	sub := filepath.Join(opts.DataRoot, testNS, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", sub, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(sub, unix.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(sub, "mounted"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	req, err := publishFor(t, d, opts, testNS)
	if err != nil {
		t.Fatalf("NodePublishVolume: %v", err)
	}
	target := req.TargetPath
	if _, err := os.Stat(filepath.Join(target, "sub", "mounted")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a mount under the namespace's directory, through the pod's mount: %v, want it left out", err)
	}
	if body, err := os.ReadFile(filepath.Join(target, "obj")); err != nil || string(body) != "tenant a's object" {
		t.Errorf("reading the object through the mount: %q, %v", body, err)
	}
	entries, err := os.ReadDir(target)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"obj", "run.sh", "sub"}) {
		t.Errorf("the mount shows %v, want tenant-a's obj, run.sh and sub alone", names)
	}
	if _, err := os.Stat(filepath.Join(target, "..", "tenant-b")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("another namespace's directory beside the mount: %v, want none", err)
	}
	if err := os.WriteFile(filepath.Join(target, "new"), []byte("x"), 0o644); !errors.Is(err, unix.EROFS) {
		t.Errorf("writing through the mount: %v, want EROFS", err)
	}
	if err := os.Remove(filepath.Join(target, "obj")); !errors.Is(err, unix.EROFS) {
		t.Errorf("removing through the mount: %v, want EROFS", err)
	}
	if err := exec.Command(filepath.Join(target, "run.sh")).Run(); !errors.Is(err, unix.EACCES) {
		t.Errorf("executing a 0755 file through the mount: %v, want EACCES (noexec)", err)
	}
	mounts := mountOptions(t, target)
	if len(mounts) != 1 {
		t.Fatalf("mounts on the target: %v, want one", mounts)
	}
	wantReadOnly(t, "the mount", mounts[0])

	if _, err := d.NodePublishVolume(context.Background(), req); err != nil {
		t.Fatalf("publishing again: %v", err)
	}
	if mounts := mountOptions(t, target); len(mounts) != 1 {
		t.Errorf("mounts on the target after publishing again: %v, want one", mounts)
	}
	for range 2 {
		if _, err := d.NodeUnpublishVolume(context.Background(), &csi.NodeUnpublishVolumeRequest{VolumeId: req.VolumeId, TargetPath: target}); err != nil {
			t.Fatalf("NodeUnpublishVolume: %v", err)
		}
	}
	if mounts := mountOptions(t, target); len(mounts) != 0 {
		t.Errorf("mounts on the target after unpublishing: %v, want none", mounts)
	}
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the target after unpublishing: %v, want it removed", err)
	}
	if body, err := os.ReadFile(filepath.Join(opts.DataRoot, testNS, "obj")); err != nil || string(body) != "tenant a's object" {
		t.Errorf("the object after unpublishing: %q, %v; want it untouched", body, err)
	}
}

// TestRealMountMakesTheNamespaceDirectory: a namespace with no data on the node yet gets its
// directory, the agent's, so that the agent can store objects the transformer then sees.
func TestRealMountMakesTheNamespaceDirectory(t *testing.T) {
	d, opts := realDriver(t, testNS)
	old := syscall.Umask(0o077) // the directory's mode is the driver's, not the umask's
	defer syscall.Umask(old)
	if _, err := publishFor(t, d, opts, testNS); err != nil {
		t.Fatalf("NodePublishVolume: %v", err)
	}
	fi, err := os.Lstat(filepath.Join(opts.DataRoot, testNS))
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); fi.Mode() != fs.ModeDir|0o755 || st.Uid != 65532 || st.Gid != 65532 {
		t.Errorf("namespace directory %v owned by %d:%d, want drwxr-xr-x owned by 65532:65532", fi.Mode(), st.Uid, st.Gid)
	}
}

// TestRealMountRefusesASymlink: a namespace "directory" that is a symlink (to another namespace's)
// or a file is refused, and nothing is mounted.
func TestRealMountRefusesASymlink(t *testing.T) {
	d, opts := realDriver(t, "evil", "filed")
	if err := os.Mkdir(filepath.Join(opts.DataRoot, "tenant-b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("tenant-b", filepath.Join(opts.DataRoot, "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(opts.DataRoot, "filed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"evil", "filed"} {
		req, err := publishFor(t, d, opts, ns)
		if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "is a symlink or not a directory") {
			t.Errorf("namespace %s: %v, want FailedPrecondition naming the rule", ns, err)
		}
		if mounts := mountOptions(t, req.TargetPath); len(mounts) != 0 {
			t.Errorf("namespace %s: mounted %v", ns, mounts)
		}
	}
}

// TestMountedIn: mount points are compared unescaped.
func TestMountedIn(t *testing.T) {
	info := "36 35 98:0 / /mnt/a\\040b rw,noatime master:1 - ext3 /dev/root rw\n"
	for target, want := range map[string]bool{"/mnt/a b": true, "/mnt/a\\040b": false, "/mnt/a": false} {
		if got, err := mountedIn(bufio.NewScanner(strings.NewReader(info)), target); got != want || err != nil {
			t.Errorf("mountedIn(%q) = %v, %v; want %v", target, got, err, want)
		}
	}
}

// TestRealMountIsReadOnlyInEveryPeer: the kubelet's directory is a shared mount, and the kubelet
// and the container runtime see the driver's mount through a peer of it, not through the driver's
// own view. There too it must be read-only and noexec: a bind remounted read-only after it was
// attached stays writable in its peers (seen with mount(2)'s bind-then-remount), since a remount
// does not propagate.
func TestRealMountIsReadOnlyInEveryPeer(t *testing.T) {
	d, opts := realDriver(t, testNS)
	if err := os.Mkdir(filepath.Join(opts.DataRoot, testNS), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(opts.DataRoot, testNS, "run.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	kubelet := opts.KubeletDir
	if err := unix.Mount(kubelet, kubelet, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(kubelet, unix.MNT_DETACH) })
	if err := unix.Mount("", kubelet, "", unix.MS_SHARED, ""); err != nil {
		t.Fatal(err)
	}
	peer := t.TempDir() // the host's view: a bind of a shared mount is its peer
	if err := unix.Mount(kubelet, peer, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(peer, unix.MNT_DETACH) })

	req, err := publishFor(t, d, opts, testNS)
	if err != nil {
		t.Fatalf("NodePublishVolume: %v", err)
	}
	rel, err := filepath.Rel(kubelet, req.TargetPath)
	if err != nil {
		t.Fatal(err)
	}
	seen := filepath.Join(peer, rel)
	mounts := mountOptions(t, seen)
	if len(mounts) != 1 {
		t.Fatalf("mounts on the target in the peer: %v, want the driver's, propagated", mounts)
	}
	wantReadOnly(t, "the peer's copy of the mount", mounts[0])
	if err := os.WriteFile(filepath.Join(seen, "new"), []byte("x"), 0o644); !errors.Is(err, unix.EROFS) {
		t.Errorf("writing through the peer's copy: %v, want EROFS", err)
	}
	if err := exec.Command(filepath.Join(seen, "run.sh")).Run(); !errors.Is(err, unix.EACCES) {
		t.Errorf("executing through the peer's copy: %v, want EACCES (noexec)", err)
	}
	if _, err := d.NodeUnpublishVolume(context.Background(), &csi.NodeUnpublishVolumeRequest{VolumeId: req.VolumeId, TargetPath: req.TargetPath}); err != nil {
		t.Fatal(err)
	}
	if mounts := mountOptions(t, seen); len(mounts) != 0 {
		t.Errorf("the peer's copy after unpublishing: %v, want none", mounts)
	}
}
