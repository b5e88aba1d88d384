package main

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mlkube/mlkube/e2e/workloads/objects"
)

func filesServer(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	mux := http.NewServeMux()
	files{root}.register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, dir
}

// do sends a request with body to u and returns the status and body of the answer.
func do(t *testing.T, method, u, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestFilesWriteReadListRemove(t *testing.T) {
	u, dir := filesServer(t)
	if code, body := do(t, "PUT", u+"/files/a/b/c.bin", "bytes"); code != 201 {
		t.Fatalf("PUT = %d %q", code, body)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "a/b/c.bin")); err != nil || string(got) != "bytes" {
		t.Errorf("on disk: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a/b/c.bin.e2e-tmp")); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}
	do(t, "PUT", u+"/files/a/d.bin", "more")
	if code, body := do(t, "GET", u+"/files/a/b/c.bin", ""); code != 200 || body != "bytes" {
		t.Errorf("GET file = %d %q", code, body)
	}
	if code, body := do(t, "GET", u+"/files/a", ""); code != 200 || body != "b/c.bin\nd.bin\n" {
		t.Errorf("GET dir = %d %q, want both files relative to it", code, body)
	}
	if code, _ := do(t, "DELETE", u+"/files/a", ""); code != 204 {
		t.Errorf("DELETE = %d", code)
	}
	if code, _ := do(t, "GET", u+"/files/a/d.bin", ""); code != 404 {
		t.Errorf("GET after DELETE = %d, want 404", code)
	}
}

func TestFilesMkdirOwner(t *testing.T) {
	u, dir := filesServer(t)
	if code, body := do(t, "PUT", u+"/dirs/x/y?owner=nobody", ""); code != 400 || !strings.Contains(body, "owner") {
		t.Errorf("non-numeric owner = %d %q, want 400 naming owner", code, body)
	}
	uid := os.Getuid() // chown to someone else needs root; to oneself works anywhere
	if code, body := do(t, "PUT", u+"/dirs/x/y?owner="+strconv.Itoa(uid), ""); code != 201 {
		t.Fatalf("PUT /dirs = %d %q", code, body)
	}
	info, err := os.Stat(filepath.Join(dir, "x/y"))
	if err != nil || !info.IsDir() || int(info.Sys().(*syscall.Stat_t).Uid) != uid {
		t.Errorf("x/y: %v, %v; want a directory owned by %d", info, err, uid)
	}
}

func TestFilesRefuseEscapes(t *testing.T) {
	u, dir := filesServer(t)
	outside := filepath.Join(filepath.Dir(dir), "escaped")
	for _, p := range []string{"/files/a%2F..%2F..%2Fescaped", "/files/..%2Fescaped"} {
		if code, _ := do(t, "PUT", u+p, "x"); code < 400 {
			t.Errorf("PUT %s = %d, want a refusal", p, code)
		}
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("a file was written outside the root: %v", err)
	}
}

// TestGenerateAndContents: generate writes the named objects with their contents (one poisoned),
// and contents answers every visible file under a directory, skipping hidden ones.
func TestGenerateAndContents(t *testing.T) {
	t.Setenv("NODE_NAME", "node-x")
	u, dir := filesServer(t)
	if code, body := do(t, "POST", u+"/generate/raw?count=3&poison=1", ""); code != 201 {
		t.Fatalf("generate: %d %s", code, body)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw", ".hidden"), []byte("journal"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, body := do(t, "GET", u+"/contents/raw", "")
	var got map[string]string
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
		t.Fatalf("contents: %d %s %v", code, body, err)
	}
	want := map[string]string{}
	for i := range 3 {
		want[objects.Name(i)] = string(objects.Content(i, "node-x", i == 1))
	}
	if !maps.Equal(got, want) {
		t.Errorf("contents %v, want %v", got, want)
	}
	if code, _ := do(t, "POST", u+"/generate/raw?count=-1", ""); code != 400 {
		t.Errorf("a negative count: %d, want 400", code)
	}
}
