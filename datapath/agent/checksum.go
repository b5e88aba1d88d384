package agent

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// An object's SHA-256 is recorded in an extended attribute of its file, with
// the size and modification time it was computed for: a file changed behind
// the agent's back (by a TransformRun, or on the node) no longer matches
// them, and its checksum is then unknown rather than wrong. Recording is best
// effort: on a file system without user extended attributes, GET, HEAD and
// lists simply omit the checksum.
const checksumAttr = "user.mlkube.sha256"

func checksumRecord(fi fs.FileInfo, sum string) string {
	return fmt.Sprintf("%s %d %d", sum, fi.Size(), fi.ModTime().UnixNano())
}

// writeChecksum records sum for f, as fi describes it.
func writeChecksum(f *os.File, fi fs.FileInfo, sum string) {
	_ = unix.Fsetxattr(int(f.Fd()), checksumAttr, []byte(checksumRecord(fi, sum)), 0) // best effort
}

// readChecksum returns the checksum recorded for f, when it still holds for
// the file fi describes, else "".
func readChecksum(f *os.File, fi fs.FileInfo) string {
	var buf [128]byte
	n, err := unix.Fgetxattr(int(f.Fd()), checksumAttr, buf[:])
	if err != nil || n < 64 {
		return ""
	}
	rec := string(buf[:n])
	if rec != checksumRecord(fi, rec[:64]) {
		return ""
	}
	return rec[:64]
}
