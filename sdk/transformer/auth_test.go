package transformer_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/ws"
	"github.com/mlkube/mlkube/sdk/transformer"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

const unauthorizedMessage = "request without the node agent's credential (X-Mlkube-Transformer-Token); transformers answer only their node's agent"

// counting is a Func that counts its calls: a refused request must never reach it.
type counting struct{ calls atomic.Int64 }

func (c *counting) fn(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
	c.calls.Add(1)
	return in, nil
}

// send makes one request to s with header token (none when empty) and returns the status and
// body of the answer.
func send(t *testing.T, s *transformertest.Server, method, target, token string, body io.Reader) (int, string) {
	t.Helper()
	header := map[string]string{}
	if token != "" {
		header[wire.HeaderTransformerToken] = token
	}
	return sendWith(t, s, method, target, header, body)
}

// sendWith makes one request to s with exactly header and returns the status and body of the
// answer.
func sendWith(t *testing.T, s *transformertest.Server, method, target string, header map[string]string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+target, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	// http.DefaultClient: s.Client would add the right token.
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// objectRequests are the requests of every mechanism that would reach the Func.
func objectRequests(t *testing.T, s *transformertest.Server) map[string]struct{ method, target string } {
	fqn, err := s.PutFile([]byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	src := s.PutSource([]byte("secret"))
	return map[string]struct{ method, target string }{
		"hpush":                 {"PUT", wire.ObjectURL("", "o", wire.Query{})},
		"hpush fqn":             {"PUT", wire.ObjectURL("", "o", wire.Query{FQN: fqn})},
		"hpull fqn":             {"GET", wire.ObjectURL("", "o", wire.Query{FQN: fqn})},
		"hpull src":             {"GET", wire.ObjectURL("", "o", wire.Query{Src: src})},
		"object named health":   {"GET", wire.ObjectURL("", "health", wire.Query{FQN: fqn})},
		"object named health 2": {"PUT", "/health"},
		"bad request":           {"POST", "/o"},
	}
}

func TestRequestsWithoutTheCredentialAreRefused(t *testing.T) {
	var c counting
	s := transformertest.NewServer(t, c.fn)
	for name, token := range map[string]string{
		"no header":              "",
		"wrong token":            rand.Text(),
		"other length":           s.Token + "x",
		"prefix":                 s.Token[:len(s.Token)-1],
		"right token, lowercase": strings.ToLower(s.Token),
	} {
		for what, r := range objectRequests(t, s) {
			t.Run(name+"/"+what, func(t *testing.T) {
				status, body := send(t, s, r.method, r.target, token, strings.NewReader("x"))
				if status != http.StatusUnauthorized || body != unauthorizedMessage {
					t.Errorf("answer %d %q, want 401 %q", status, body, unauthorizedMessage)
				}
			})
		}
	}
	if n := c.calls.Load(); n != 0 {
		t.Errorf("the Func ran %d times for refused requests", n)
	}
	// The same requests with the credential reach the Func.
	if _, err := s.Transform(t.Context(), transformertest.HPush, "o", "", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if c.calls.Load() != 1 {
		t.Error("an authorized request did not reach the Func")
	}
}

func TestHealthNeedsNoCredential(t *testing.T) {
	s := transformertest.NewServer(t, echo)
	if status, body := send(t, s, "GET", wire.PathHealth, "", nil); status != http.StatusOK || body != wire.HealthOK {
		t.Errorf("GET /health without the credential = %d %q, want 200 %q", status, body, wire.HealthOK)
	}
}

func TestWebSocketWithoutTheCredentialIsRefusedBeforeAccept(t *testing.T) {
	var c counting
	s := transformertest.NewServer(t, c.fn)
	for name, token := range map[string]string{"no header": "", "wrong token": rand.Text()} {
		t.Run(name, func(t *testing.T) {
			_, err := transformertest.DialWS(t.Context(), s.URL, token)
			he, ok := errors.AsType[*ws.HandshakeError](err)
			if !ok || he.Status != http.StatusUnauthorized {
				t.Fatalf("dial = %v, want a handshake refused with 401", err)
			}
		})
	}
	if _, err := s.Transform(t.Context(), transformertest.WS, "o", "", []byte("x")); err != nil {
		t.Fatalf("ws with the credential: %v", err)
	}
	if c.calls.Load() != 1 {
		t.Errorf("the Func ran %d times, want once (for the authorized session only)", c.calls.Load())
	}
}

func TestTokenFileIsReadAgainWhenItChanges(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	write := func(token string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(file, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(file, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	write("first-token", t0)
	s := transformertest.NewServer(t, echo, transformer.WithTokenFile(file))
	if status, _ := send(t, s, "PUT", "/o", "first-token", strings.NewReader("x")); status != http.StatusOK {
		t.Fatalf("the file's token: %d, want 200 (its trailing newline is not part of it)", status)
	}
	// Same size, new bytes, later modification time: a Secret updated in place.
	write("other-token", t0.Add(time.Second))
	if status, _ := send(t, s, "PUT", "/o", "first-token", strings.NewReader("x")); status != http.StatusUnauthorized {
		t.Errorf("the old token after the file changed: %d, want 401", status)
	}
	if status, _ := send(t, s, "PUT", "/o", "other-token", strings.NewReader("x")); status != http.StatusOK {
		t.Errorf("the new token: %d, want 200", status)
	}
}

func TestMissingOrEmptyTokenFileRefusesEveryObject(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{"missing": filepath.Join(dir, "missing"), "empty": empty} {
		t.Run(name, func(t *testing.T) {
			var c counting
			s := transformertest.NewServer(t, c.fn, transformer.WithTokenFile(file))
			if status, _ := send(t, s, "PUT", "/o", "", strings.NewReader("x")); status != http.StatusUnauthorized {
				t.Errorf("object without a header: %d, want 401", status)
			}
			if status, _ := send(t, s, "GET", wire.PathHealth, "", nil); status != http.StatusOK {
				t.Errorf("GET /health: %d, want 200, so that the pod turns ready and the refusals explain themselves", status)
			}
			if c.calls.Load() != 0 {
				t.Error("the Func ran")
			}
		})
	}
}

func TestNewNeedsATokenSource(t *testing.T) {
	t.Setenv(wire.EnvTokenFile, "")
	_, err := transformer.New(echo)
	if err == nil || err.Error() != "no agent credential: MLKUBE_TOKEN_FILE is unset (the controller sets it; use WithoutAuth to run without one locally)" {
		t.Errorf("New without a token source = %v, want it to fail closed", err)
	}
	if _, err := transformer.New(echo, transformer.WithoutAuth()); err != nil {
		t.Errorf("New with WithoutAuth: %v", err)
	}
	t.Setenv(wire.EnvTokenFile, filepath.Join(t.TempDir(), "token"))
	if _, err := transformer.New(echo); err != nil {
		t.Errorf("New with %s set: %v", wire.EnvTokenFile, err)
	}
}

func TestWithoutAuthServesAnyone(t *testing.T) {
	s := transformertest.NewServer(t, echo, transformer.WithoutAuth())
	if status, body := send(t, s, "PUT", "/o", "", strings.NewReader("x")); status != http.StatusOK || body != "x" {
		t.Errorf("WithoutAuth: %d %q, want 200 x", status, body)
	}
}
