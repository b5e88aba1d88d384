package main

import (
	"fmt"
	"os"
	"syscall"
)

// prepareDataRoot gives the node's data directory to the agent's uid and gid with mode 0750: the
// kubelet creates a hostPath directory as root, where the agent, which runs as a non-root user,
// could create no namespace directory. It runs as root in the DaemonSet's init container with
// CAP_CHOWN only: the mode is set first, while root still owns the directory (changing the mode
// of another user's file would take CAP_FOWNER too). Only the directory itself changes hands:
// what is in it is the agent's already, or the node operator's to decide.
func prepareDataRoot(dir string, uid, gid int) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("--prepare-data-root: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--prepare-data-root: %w", err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid && int(st.Gid) == gid && fi.Mode().Perm() == 0o750 {
		return nil // prepared by an earlier start
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		return fmt.Errorf("--prepare-data-root: mode 0750 on %s (run as its owner, root): %w", dir, err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("--prepare-data-root: giving %s to %d:%d (needs CAP_CHOWN): %w", dir, uid, gid, err)
	}
	return nil
}
