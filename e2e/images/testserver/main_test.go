package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIdentityAndFetch(t *testing.T) {
	t.Setenv("POD_NAME", "p-1")
	t.Setenv("NODE_NAME", "node-2")
	srv := httptest.NewServer(newMux())
	defer srv.Close()

	code, body := do(t, "GET", srv.URL+"/", "")
	var id Identity
	if err := json.Unmarshal([]byte(body), &id); err != nil || code != http.StatusOK {
		t.Fatalf("GET / = %d %q (%v)", code, body, err)
	}
	if diff := cmp.Diff(Identity{Pod: "p-1", Node: "node-2"}, id); diff != "" {
		t.Errorf("identity (-want +got):\n%s", diff)
	}

	// /fetch relays another server's answer: here our own identity.
	code, fetched := do(t, "GET", srv.URL+"/fetch?url="+url.QueryEscape(srv.URL+"/"), "")
	if code != http.StatusOK || fetched != body {
		t.Errorf("fetch = %d %q, want 200 %q", code, fetched, body)
	}
}

func TestFetchRelaysAPost(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, r.Method+" "+r.Header.Get("Content-Type")+" "+string(b))
	}))
	defer echo.Close()
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/fetch?url="+url.QueryEscape(echo.URL), "text/plain", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if want := `POST application/json {"a":1}`; resp.StatusCode != http.StatusAccepted || string(b) != want {
		t.Errorf("POST /fetch = %d %q, want 202 %q", resp.StatusCode, b, want)
	}
}

func TestProbeErrors(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	for name, path := range map[string]string{
		"fetch of a closed port":  "/fetch?url=" + url.QueryEscape("http://127.0.0.1:1/"),
		"lookup of an empty name": "/lookup?name=",
	} {
		t.Run(name, func(t *testing.T) {
			if code, body := do(t, "GET", srv.URL+path, ""); code != http.StatusBadGateway || strings.TrimSpace(body) == "" {
				t.Errorf("GET %s = %d %q, want 502 with the error", path, code, body)
			}
		})
	}
}

func TestLookupLocalhost(t *testing.T) {
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	code, body := do(t, "GET", srv.URL+"/lookup?name=localhost", "")
	if code != http.StatusOK || !strings.Contains(body, "127.0.0.1") {
		t.Errorf("lookup localhost = %d %q", code, body)
	}
}

// TestFetchSendsTheToken: with TOKEN_FILE, /fetch sends the file's token (read per request, so a
// rotated token is picked up) unless ?token=none.
func TestFetchSendsTheToken(t *testing.T) {
	var got []string
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer echo.Close()
	file := filepath.Join(t.TempDir(), "token")
	t.Setenv("TOKEN_FILE", file)
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	for _, step := range []struct{ token, query string }{{"first\n", ""}, {"second", ""}, {"second", "&token=none"}} {
		if err := os.WriteFile(file, []byte(step.token), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, body := do(t, "GET", srv.URL+"/fetch?url="+url.QueryEscape(echo.URL)+step.query, ""); code != 200 {
			t.Fatalf("fetch: %d %s", code, body)
		}
	}
	if want := []string{"Bearer first", "Bearer second", ""}; !slices.Equal(got, want) {
		t.Errorf("sent %q, want %q", got, want)
	}
}

// TestFetchSendsMethodAndHeaders: ?method= and ?header= shape the relayed request, and /canary
// counts what reached it.
func TestFetchSendsMethodAndHeaders(t *testing.T) {
	var got *http.Request
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r }))
	defer echo.Close()
	srv := httptest.NewServer(newMux())
	defer srv.Close()
	q := "/fetch?method=PUT&header=" + url.QueryEscape("X-A: 1") + "&header=" + url.QueryEscape("Upgrade:websocket") + "&url=" + url.QueryEscape(echo.URL+"/o")
	if code, body := do(t, "GET", srv.URL+q, ""); code != 200 {
		t.Fatalf("fetch: %d %s", code, body)
	}
	if got.Method != "PUT" || got.Header.Get("X-A") != "1" || got.Header.Get("Upgrade") != "websocket" {
		t.Errorf("relayed %s with %v", got.Method, got.Header)
	}
	do(t, "GET", srv.URL+"/canary/x", "")
	if code, n := do(t, "GET", srv.URL+"/canary-count", ""); code != 200 || n != "1" {
		t.Errorf("canary count %d %q, want 1", code, n)
	}
}
