package main

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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

// put writes a file under dir as the object API would have.
func put(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFilesReadListRemove(t *testing.T) {
	u, dir := filesServer(t)
	put(t, dir, "a/b/c.bin", "bytes")
	put(t, dir, "a/d.bin", "more")
	if code, body := do(t, "GET", u+"/files/a/b/c.bin", ""); code != 200 || body != "bytes" {
		t.Errorf("GET file = %d %q", code, body)
	}
	if code, body := do(t, "GET", u+"/files/a", ""); code != 200 || body != "b/c.bin\nd.bin\n" {
		t.Errorf("GET dir = %d %q, want both files relative to it", code, body)
	}
	if code, _ := do(t, "PUT", u+"/files/a/e.bin", "x"); code != http.StatusMethodNotAllowed {
		t.Errorf("PUT = %d, want 405: the suite writes through the object API", code)
	}
	if code, _ := do(t, "DELETE", u+"/files/a", ""); code != 204 {
		t.Errorf("DELETE = %d", code)
	}
	if code, _ := do(t, "GET", u+"/files/a/d.bin", ""); code != 404 {
		t.Errorf("GET after DELETE = %d, want 404", code)
	}
}

func TestFilesRefuseEscapes(t *testing.T) {
	u, dir := filesServer(t)
	outside := filepath.Join(filepath.Dir(dir), "escaped")
	put(t, filepath.Dir(dir), "escaped", "not the server's")
	for _, p := range []string{"/files/a%2F..%2F..%2Fescaped", "/files/..%2Fescaped"} {
		if code, body := do(t, "GET", u+p, ""); code < 400 || strings.Contains(body, "not the server's") {
			t.Errorf("GET %s = %d %q, want a refusal", p, code, body)
		}
		do(t, "DELETE", u+p, "") // may answer 204 (nothing under the root by that name): the file outside must stay
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a file outside the root was removed: %v", err)
	}
}

// TestContents: contents answers every visible file under a directory, skipping hidden ones.
func TestContents(t *testing.T) {
	u, dir := filesServer(t)
	want := map[string]string{}
	for i := range 3 {
		want[objects.Name(i)] = string(objects.Content(i, "node-x", i == 1))
		put(t, dir, "raw/"+objects.Name(i), want[objects.Name(i)])
	}
	put(t, dir, "raw/.hidden", "journal")
	code, body := do(t, "GET", u+"/contents/raw", "")
	var got map[string]string
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
		t.Fatalf("contents: %d %s %v", code, body, err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("contents %v, want %v", got, want)
	}
}
