package etl

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/mlkube/mlkube/api/wire"
)

// sha256Of reads r to its end and returns its SHA-256 in lower-case hex, as wire.HeaderChecksum
// carries it, and its length.
func sha256Of(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// same says whether an object is the local data of size and checksum. An object whose checksum
// the agent does not know is never the same: copying it again is safe, skipping it may not be.
func same(remote wire.ObjectInfo, size int64, checksum string) bool {
	return remote.Checksum != "" && remote.Size == size && remote.Checksum == checksum
}

// copyVerified copies an object's body to w and fails when its SHA-256 is not want (when the
// agent sent one), so that a corrupt download is never renamed into place.
func copyVerified(w io.Writer, body io.Reader, object, want string) error {
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(w, h), body); err != nil {
		return fmt.Errorf("reading object %s: %w", object, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); want != "" && got != want {
		return fmt.Errorf("object %s arrived with SHA-256 %s, not the %s the agent announced; copy it again", object, got, want)
	}
	return nil
}
