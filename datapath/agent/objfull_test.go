package agent

import (
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mlkube/mlkube/internal/durable"
	"github.com/mlkube/mlkube/internal/status"
)

// TestFullDataRootIs507 checks that a write the file system refuses for
// want of space is answered as a PUT that does not fit, and that other
// failures keep their status.
func TestFullDataRootIs507(t *testing.T) {
	b := storeBounds{node: testNode}
	written := func(errno error) error {
		return durable.StorageError("a", &fs.PathError{Op: "write", Path: "/data/default/.a.put-1.tmp", Err: errno})
	}
	for name, tc := range map[string]struct {
		err      error
		wantCode int
		wantMsg  string
	}{
		"no space": {written(unix.ENOSPC), http.StatusInsufficientStorage,
			"node node-a's data root is full (no space left on device): the object was not stored; free space, or store it on another node with ?node="},
		"quota":      {written(unix.EDQUOT), http.StatusInsufficientStorage, "node node-a's data root is full (disk quota exceeded)"},
		"i/o error":  {written(unix.EIO), http.StatusInternalServerError, `writing "a": write /data/default/.a.put-1.tmp: input/output error`},
		"bad object": {status.BadRequest(errors.New("bad name")), http.StatusBadRequest, "bad name"},
	} {
		t.Run(name, func(t *testing.T) {
			err := b.full(tc.err, putAdvice)
			if got := status.Of(err); got != tc.wantCode || !strings.HasPrefix(status.Message(err), tc.wantMsg) {
				t.Errorf("full(%v) = %d %q, want %d %q", tc.err, got, status.Message(err), tc.wantCode, tc.wantMsg)
			}
			if !errors.Is(err, unix.ENOSPC) && !errors.Is(err, unix.EDQUOT) && tc.wantCode == http.StatusInsufficientStorage {
				t.Errorf("full(%v) hides its cause", tc.err)
			}
		})
	}
}
