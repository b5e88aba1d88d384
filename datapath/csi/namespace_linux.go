package csi

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
)

// nsDir is a namespace's data directory, open with O_PATH: a handle on the directory itself,
// which /proc/self/fd names for the bind mount, whatever its path comes to name meanwhile.
type nsDir struct{ fd int }

func (d nsDir) path() string { return fmt.Sprintf("/proc/self/fd/%d", d.fd) }

func (d nsDir) Close() error { return unix.Close(d.fd) }

// openNamespace opens the directory ns of dataRoot, making it when missing: mode 0755 (readable
// by the transformer, which may run as any user) and owned by uid:gid, the agent's user, which
// stores the namespace's objects in it, as the agent makes it. It follows no symlink under the
// data root: ns is one path element (a DNS label, parsePublish) opened with openat and
// O_NOFOLLOW, and a symlink or anything else than a directory there is refused, since it would
// be whatever the agent, or someone who wrote to the data root, pointed it at.
func openNamespace(dataRoot, ns string, uid, gid int) (nsDir, error) {
	root, err := unix.Open(dataRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nsDir{}, refuse(codes.Internal, "the data root %s (--data-root): %v", dataRoot, err)
	}
	defer unix.Close(root)
	err = unix.Mkdirat(root, ns, 0o755)
	made := err == nil
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nsDir{}, refuse(codes.Internal, "making the data directory of namespace %s in %s: %v", ns, dataRoot, err)
	}
	// O_DIRECTORY with O_NOFOLLOW fails with ENOTDIR on a symlink, even with O_PATH (which would
	// otherwise open the link itself), and on anything else that is not a directory.
	fd, err := unix.Openat(root, ns, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP):
		return nsDir{}, refuse(codes.FailedPrecondition, "%s/%s, the data directory of namespace %s, is a symlink or not a directory: only a directory is mounted; remove it from the node", dataRoot, ns, ns)
	case err != nil:
		return nsDir{}, refuse(codes.Internal, "opening the data directory of namespace %s in %s: %v", ns, dataRoot, err)
	}
	d := nsDir{fd: fd}
	if made {
		if err := own(d, uid, gid); err != nil {
			d.Close()
			return nsDir{}, refuse(codes.Internal, "giving the data directory of namespace %s in %s to %d:%d (--data-root-uid, --data-root-gid): %v", ns, dataRoot, uid, gid, err)
		}
	}
	return d, nil
}

// own gives d to uid:gid with mode 0755, through the open handle, not the path: the process's
// umask narrows the mode mkdir sets.
func own(d nsDir, uid, gid int) error {
	if err := unix.Fchownat(d.fd, "", uid, gid, unix.AT_EMPTY_PATH); err != nil {
		return err
	}
	return unix.Chmod(d.path(), 0o755)
}
