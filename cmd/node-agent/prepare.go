package main

import (
	"fmt"
	"os"
	"syscall"
)

// prepareDataRoot gives the node's data directory to the agent's uid and gid with mode 0750: the
// kubelet creates a hostPath directory as root, where the agent, which runs as a non-root user,
// could create no namespace directory. It runs as root in the DaemonSet's init container, with
// CAP_CHOWN only, at every start of the agent's pod: a directory the agent owns already is left
// as it is (its mode is the owner's to set, and root without CAP_FOWNER could not change it). Any
// other directory is taken back by root first, so that its mode can be set as its owner, then
// given to the agent. Only the directory itself changes hands: what is in it is the agent's
// already, or the node operator's to decide.
func prepareDataRoot(dir string, uid, gid int) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("--prepare-data-root: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("--prepare-data-root: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) == uid && int(st.Gid) == gid {
		return nil // the agent's already: prepared by an earlier start
	}
	if ok && st.Uid != 0 {
		if err := os.Chown(dir, 0, 0); err != nil {
			return fmt.Errorf("--prepare-data-root: taking %s back from %d:%d (needs root and CAP_CHOWN): %w", dir, st.Uid, st.Gid, err)
		}
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		return fmt.Errorf("--prepare-data-root: mode 0750 on %s (run as root): %w", dir, err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("--prepare-data-root: giving %s to %d:%d (needs CAP_CHOWN): %w", dir, uid, gid, err)
	}
	return nil
}
