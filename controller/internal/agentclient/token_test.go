package agentclient

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	clk := clocktesting.NewFakePassiveClock(time.Now())
	f := &TokenFile{Path: path, Clock: clk}
	if _, err := f.Token(); err == nil {
		t.Error("no file: no error")
	}
	writeToken(t, path, " \n")
	if _, err := f.Token(); err == nil {
		t.Error("an empty file: no error")
	}
	writeToken(t, path, "one")
	tok, err := f.Token()
	if err != nil || tok != "one" {
		t.Fatalf("Token() = %q, %v; want one", tok, err)
	}
	writeToken(t, path, "two")
	clk.SetTime(clk.Now().Add(TokenMaxAge - time.Second))
	if tok, _ := f.Token(); tok != "one" {
		t.Errorf("a copy younger than %v was re-read: %q", TokenMaxAge, tok)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	if tok, _ := f.Token(); tok != "two" {
		t.Errorf("after %v Token() = %q; want the rotated two", TokenMaxAge, tok)
	}
}

func writeToken(t *testing.T, path, token string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
}
