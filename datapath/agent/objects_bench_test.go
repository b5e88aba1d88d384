package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/durable"
)

// inFlight is the requests each object benchmark keeps going at once.
const inFlight = 16

// runInFlight calls do from inFlight goroutines until b.N calls are done.
func runInFlight(b *testing.B, do func(i int64)) {
	var n atomic.Int64
	b.SetParallelism((inFlight + 1) / 2) // goroutines = parallelism × GOMAXPROCS; 16 on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			do(n.Add(1))
		}
	})
}

// benchGet GETs objects of size through the agent and through a bare
// http.FileServer over the same files, checking every answer.
func benchGet(b *testing.B, size, count int) {
	e := newObjectEnv(b)
	data := bytes.Repeat([]byte("x"), size)
	for i := range count {
		if resp, body := e.request(http.MethodPut, e.objectURL(fmt.Sprintf("o%d", i)), bytes.NewReader(data)); resp.code != http.StatusCreated {
			b.Fatalf("PUT: %d %s", resp.code, body)
		}
	}
	bare := httptest.NewServer(http.FileServer(http.Dir(e.root)))
	defer bare.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * inFlight}}
	for name, url := range map[string]func(int64) string{
		"agent":      func(i int64) string { return e.objectURL(fmt.Sprintf("o%d", i%int64(count))) },
		"fileserver": func(i int64) string { return fmt.Sprintf("%s/o%d", bare.URL, i%int64(count)) },
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			runInFlight(b, func(i int64) {
				resp, err := client.Get(url(i))
				if err != nil {
					b.Error(err)
					return
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || n != int64(size) {
					b.Errorf("GET: %d, %d bytes, %v", resp.StatusCode, n, err)
				}
			})
		})
	}
}

func BenchmarkObjectGet4KiB(b *testing.B) { benchGet(b, 4<<10, 256) }
func BenchmarkObjectGet1MiB(b *testing.B) { benchGet(b, 1<<20, 16) }

// BenchmarkObjectPut PUTs 64 KiB objects through the agent and to a bare
// server that writes them by the same rule (package durable).
func BenchmarkObjectPut(b *testing.B) {
	const size = 64 << 10
	e := newObjectEnv(b)
	bareDir := b.TempDir()
	bareRoot, err := os.OpenRoot(bareDir)
	if err != nil {
		b.Fatal(err)
	}
	defer bareRoot.Close()
	var tmp atomic.Int64
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		buf := bufpool.Objects.Get()
		defer bufpool.Objects.Put(buf)
		err := durable.Create(bareRoot, name, durable.TempName(name, fmt.Sprint("b", tmp.Add(1))), r.Body, *buf, durable.Hooks{})
		if err == nil {
			err = durable.SyncDir(bareRoot, filepath.Dir(name))
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer bare.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * inFlight}}
	data := bytes.Repeat([]byte("p"), size)
	for name, url := range map[string]func(int64) string{
		"agent": func(i int64) string { return e.objectURL(fmt.Sprintf("o%d", i%64)) },
		"bare":  func(i int64) string { return fmt.Sprintf("%s/o%d", bare.URL, i%64) },
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			runInFlight(b, func(i int64) {
				req, _ := http.NewRequest(http.MethodPut, url(i), bytes.NewReader(data))
				resp, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Errorf("PUT: %d", resp.StatusCode)
				}
			})
		})
	}
}

// BenchmarkObjectBatch reads batches of 32 objects of 4 KiB: through the agent's batch read,
// against a bare server that answers the same files in the same framing (the floor of one
// request's work), and against 32 GETs of the agent one after another (what a reader without
// batches does). Every answer's framing and bytes are checked.
func BenchmarkObjectBatch(b *testing.B) {
	const size, count, batch = 4 << 10, 256, 32
	e := newObjectEnv(b)
	data := bytes.Repeat([]byte("x"), size)
	for i := range count {
		if resp, body := e.request(http.MethodPut, e.objectURL(fmt.Sprintf("o%d", i)), bytes.NewReader(data)); resp.code != http.StatusCreated {
			b.Fatalf("PUT: %d %s", resp.code, body)
		}
	}
	names := func(i int64) []string {
		out := make([]string, batch)
		for j := range out {
			out[j] = fmt.Sprintf("o%d", (i*batch+int64(j))%count)
		}
		return out
	}
	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req wire.BatchRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var out []byte
		for _, name := range req.Objects {
			d, err := os.ReadFile(filepath.Join(e.root, name))
			if err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
			out = append(wire.AppendBatchHeader(out, http.StatusOK, name, int64(len(d))), name...)
			out = append(out, d...)
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(out)))
		_, _ = w.Write(out)
	}))
	defer bare.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * inFlight}}
	post := func(url string, i int64) error {
		body, _ := json.Marshal(wire.BatchRequest{Objects: names(i)})
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST: %d %w", resp.StatusCode, err)
		}
		entries, err := parseBatch(answer)
		if err != nil || len(entries) != batch {
			return fmt.Errorf("batch of %d entries: %w", len(entries), err)
		}
		for _, en := range entries {
			if en.Status != http.StatusOK || en.Data != string(data) {
				return fmt.Errorf("object %s: %d, %d bytes", en.Name, en.Status, len(en.Data))
			}
		}
		return nil
	}
	gets := func(i int64) error {
		for _, name := range names(i) {
			resp, err := client.Get(e.objectURL(name))
			if err != nil {
				return err
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(got, data) {
				return fmt.Errorf("GET %s: %d, %d bytes, %w", name, resp.StatusCode, len(got), err)
			}
		}
		return nil
	}
	for _, bench := range []struct {
		name string
		do   func(int64) error
	}{
		{"agent", func(i int64) error { return post(e.batchURL(), i) }},
		{"bare", func(i int64) error { return post(bare.URL, i) }},
		{"agent-gets", gets},
	} {
		b.Run(bench.name, func(b *testing.B) {
			b.SetBytes(batch * size)
			runInFlight(b, func(i int64) {
				if err := bench.do(i); err != nil {
					b.Error(err)
				}
			})
		})
	}
}
