package csi

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mlkube/mlkube/internal/mountinfo"
)

// SystemMounter mounts with the mount(2) family of system calls.
type SystemMounter struct{}

var _ Mounter = SystemMounter{}

// readOnlyAttrs are the mount's: read-only, and nothing in the namespace's data can become a
// set-uid program, a device or an executable in the transformer.
const readOnlyAttrs = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC

// BindReadOnly implements Mounter. The bind is made detached (open_tree), given its attributes,
// and only then attached on target (move_mount). The order matters: target lies in the kubelet's
// directory, a shared mount, and the kernel copies a new mount into every peer of it (the host's
// view, which the kubelet hands the container runtime) with the flags it has when it is attached.
// A bind remounted read-only afterwards, as mount(2) alone allows, would stay writable, set-uid
// and executable in those copies: a remount changes one mount, and does not propagate. The clone
// is not recursive, so mounts under the data root are not carried into the pod.
func (SystemMounter) BindReadOnly(source, target string) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("cloning %s for a bind mount (open_tree, Linux 5.12 or later with mount_setattr): %w", source, err)
	}
	defer unix.Close(tree)
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: readOnlyAttrs}); err != nil {
		return fmt.Errorf("making the bind mount read-only, nosuid, nodev and noexec (mount_setattr): %w", err)
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attaching the bind mount (move_mount): %w", err)
	}
	return nil
}

// maxStacked bounds the unmounts of one target: the driver makes one mount on it, and a few more
// would only be left by something else.
const maxStacked = 8

// Unmount implements Mounter. It detaches a mount still busy (a transformer's open file), which
// the kernel removes once it is let go, so that the kubelet can delete the pod's directory.
func (SystemMounter) Unmount(target string) error {
	for range maxStacked {
		err := unix.Unmount(target, unix.UMOUNT_NOFOLLOW)
		if errors.Is(err, unix.EBUSY) {
			err = unix.Unmount(target, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
		}
		switch {
		case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT):
			return nil // no (more) mount point there
		case err != nil:
			return err
		}
	}
	return fmt.Errorf("%s: still mounted after %d unmounts", target, maxStacked)
}

// Mounted implements Mounter, by the mount points of /proc/self/mountinfo.
func (SystemMounter) Mounted(target string) (bool, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	defer f.Close()
	return mountedIn(bufio.NewScanner(f), target)
}

// mountedIn tells whether target is the mount point (fifth field) of a line of mountinfo.
func mountedIn(s *bufio.Scanner, target string) (bool, error) {
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && mountinfo.Unescape(fields[4]) == target {
			return true, nil
		}
	}
	return false, s.Err()
}
