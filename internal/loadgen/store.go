package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strconv"
	"sync/atomic"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/durable"
	"github.com/mlkube/mlkube/internal/status"
)

// MethodStore is a Row's method of storing objects: a PUT whose answer is not the body but the
// stored object's wire.ObjectInfo, as the object API and the bare Store answer.
const MethodStore = "STORE"

// storeTag tags the bare store's temporary names (package durable).
const storeTag = "bare-"

// Store is the bare store the object API's PUT is measured against: a PUT of /store/NAME writes
// the body under root by the agent's rule (package durable: a temporary name, fsync, rename,
// fsync of the directory) and answers 201 with the object's name and size. It takes no
// checksum: what the agent's hashing costs shows in the ratio.
func Store(root *os.Root) http.HandlerFunc {
	var seq atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		buf := bufpool.Objects.Get()
		defer bufpool.Objects.Put(buf)
		cr := &countingReader{r: r.Body}
		tmp := durable.TempName(name, storeTag+strconv.FormatInt(seq.Add(1), 10))
		err := durable.Create(root, name, tmp, cr, *buf, durable.Hooks{})
		if err == nil {
			err = durable.SyncDir(root, path.Dir(name))
		}
		if err != nil {
			http.Error(w, err.Error(), status.Of(err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(wire.ObjectInfo{Name: name, Size: cr.n})
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// checkStored reads a store's answer: 200 or 201 and the object's wire.ObjectInfo, of size bytes
// and, when checksum is set, of that SHA-256.
func checkStored(resp *http.Response, size int, checksum string) error {
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("status %d: %s", resp.StatusCode, msg)
	}
	var info wire.ObjectInfo
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&info); err != nil {
		return fmt.Errorf("the answer is not an object's info: %w", err)
	}
	switch {
	case info.Size != int64(size):
		return fmt.Errorf("stored %d bytes, want %d", info.Size, size)
	case checksum != "" && info.Checksum != checksum:
		return fmt.Errorf("stored with SHA-256 %q, want %s", info.Checksum, checksum)
	}
	return nil
}
