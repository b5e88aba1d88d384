package csi

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// SystemMounter mounts with the mount(2) family of system calls.
type SystemMounter struct{}

var _ Mounter = SystemMounter{}

// readOnlyFlags are the remount's: read-only, and nothing in the namespace's data can become a
// set-uid program, a device or an executable in the transformer. MS_REC is left out on purpose,
// both here and in the bind, so mounts under the data root are not carried into the pod.
const readOnlyFlags = unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC

// BindReadOnly implements Mounter. A bind mount takes its flags from the remount that follows
// it, so until then it is writable: a failed remount undoes the bind.
func (SystemMounter) BindReadOnly(source, target string) error {
	if err := unix.Mount(source, target, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind mount: %w", err)
	}
	if err := unix.Mount("", target, "", readOnlyFlags, ""); err != nil {
		if uerr := unix.Unmount(target, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); uerr != nil {
			return fmt.Errorf("remounting read-only: %w; and undoing the bind: %w", err, uerr)
		}
		return fmt.Errorf("remounting read-only: %w", err)
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
		if len(fields) > 4 && unescapeMountinfo(fields[4]) == target {
			return true, nil
		}
	}
	return false, s.Err()
}

// unescapeMountinfo undoes the kernel's octal escapes of space, tab, newline and backslash
// (\040 and so on) in a mountinfo path.
func unescapeMountinfo(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+3 < len(p) {
			if n, err := strconv.ParseUint(p[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
