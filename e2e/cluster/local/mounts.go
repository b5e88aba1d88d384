package local

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/mlkube/mlkube/internal/mountinfo"
)

// mount is one line of /proc/self/mountinfo, as much as the cluster needs.
type mount struct {
	Point  string
	FSType string
}

// readMounts parses /proc/self/mountinfo.
func readMounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := parseMountInfoLine(sc.Text()); ok {
			out = append(out, m)
		}
	}
	return out, sc.Err()
}

// parseMountInfoLine reads field 5 (the mount point) and the file system type after " - ".
func parseMountInfoLine(line string) (mount, bool) {
	pre, post, ok := strings.Cut(line, " - ")
	fields, postFields := strings.Fields(pre), strings.Fields(post)
	if !ok || len(fields) < 5 || len(postFields) < 1 {
		return mount{}, false
	}
	return mount{Point: mountinfo.Unescape(fields[4]), FSType: postFields[0]}, true
}

// mountsUnder lists the mount points at or below any of dirs, deepest first, so each can be
// unmounted before the one it sits on.
func mountsUnder(mounts []mount, dirs ...string) []string {
	var out []string
	for _, m := range mounts {
		for _, d := range dirs {
			if m.Point == d || strings.HasPrefix(m.Point, d+"/") {
				out = append(out, m.Point)
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return strings.Count(out[i], "/") > strings.Count(out[j], "/") })
	return out
}

// unmountUnder detaches every mount below dirs: kubelet's volume tmpfs, containerd's overlay
// roots and shm, sandbox network namespaces. They outlive the processes that made them.
func unmountUnder(dirs ...string) error {
	mounts, err := readMounts()
	if err != nil {
		return err
	}
	for _, p := range mountsUnder(mounts, dirs...) {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
			return &os.PathError{Op: "unmount", Path: p, Err: err}
		}
	}
	return nil
}

// shareMount makes dir a mount of its own with shared propagation (a bind mount onto itself),
// unless it already is one. Teardown's unmountUnder removes it with the mounts below it.
func shareMount(dir string) error {
	if err := ensureDir(dir); err != nil {
		return err
	}
	mounts, err := readMounts()
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(mounts, func(m mount) bool { return m.Point == dir }) {
		if err := syscall.Mount(dir, dir, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("bind-mounting %s onto itself: %w", dir, err)
		}
	}
	if err := syscall.Mount("", dir, "", syscall.MS_SHARED|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("making %s a shared mount: %w", dir, err)
	}
	return nil
}
