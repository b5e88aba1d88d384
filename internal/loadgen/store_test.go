package loadgen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
)

// TestStoreRowsAndSeedsAreChecked stores objects by a plan's seeds, into a store that verifies
// and answers their checksum as the object API does, and by a STORE row into the bare store, one
// object a client, and deletes them after; an answer of another size fails.
func TestStoreRowsAndSeedsAreChecked(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var deleted []string
	var seeded []byte
	mux := http.NewServeMux()
	mux.Handle("PUT /store/{name...}", Store(root))
	mux.HandleFunc("PUT /objects/seed", func(w http.ResponseWriter, r *http.Request) {
		seeded, _ = io.ReadAll(r.Body)
		sum := sha256.Sum256(seeded)
		if r.Header.Get(wire.HeaderChecksum) != hex.EncodeToString(sum[:]) {
			http.Error(w, "checksum", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(wire.ObjectInfo{Name: "seed", Size: int64(len(seeded)), Checksum: hex.EncodeToString(sum[:])})
	})
	mux.HandleFunc("DELETE /store/", func(w http.ResponseWriter, r *http.Request) { deleted = append(deleted, r.URL.Path) })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	p := Plan{Rounds: 1, Seeds: []Seed{{URL: srv.URL + "/objects/seed", Size: 5000}}, Cleanup: []string{srv.URL + "/store/"},
		Rows: []Row{{Name: "put", Method: MethodStore, URL: srv.URL + "/store/put/{client}", Size: 4096, InFlight: 3, Duration: 50 * time.Millisecond}}}
	var got []Result
	if err := p.Execute(context.Background(), func(_ int, r Result) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Objects == 0 {
		t.Errorf("results %+v, want one row of objects", got)
	}
	if !bytes.Equal(seeded, Payload(5000)) {
		t.Errorf("the seed is not its payload")
	}
	for _, c := range []string{"0", "1", "2"} {
		if b, err := os.ReadFile(filepath.Join(dir, "put", c)); err != nil || !bytes.Equal(b, Payload(4096)) {
			t.Errorf("client %s's object is not its payload: %v", c, err)
		}
	}
	if len(deleted) != 1 {
		t.Errorf("cleanup DELETEd %v, want the one prefix", deleted)
	}

	short := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"name":"o","size":1}`))
	}))
	defer short.Close()
	p.Seeds[0].URL, p.Cleanup = short.URL, nil
	if err := p.Execute(context.Background(), func(int, Result) {}); err == nil || !strings.Contains(err.Error(), "stored 1 bytes, want 5000") {
		t.Errorf("a seed stored short: %v, want its size refused", err)
	}
}
