package transformer_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// serveRaw serves fn without a credential and returns its base URL.
func serveRaw(t *testing.T, fn transformer.Func) string {
	t.Helper()
	h, err := transformer.New(fn, transformer.WithoutAuth())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL
}

// put sends body to object o of base with the object timeout header set to
// timeout (none when empty) and returns the answer's status and body.
func put(t *testing.T, base, timeout string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, base+"/o", body)
	if err != nil {
		t.Fatal(err)
	}
	if timeout != "" {
		req.Header.Set(wire.HeaderObjectTimeout, timeout)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	msg, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(msg)
}

func TestObjectTimeoutBoundsTheFuncsContext(t *testing.T) {
	type seen struct {
		deadline time.Time
		ok       bool
		at       time.Time
	}
	got := make(chan seen, 1)
	base := serveRaw(t, func(ctx context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		dl, ok := ctx.Deadline()
		got <- seen{dl, ok, time.Now()}
		return in, nil
	})

	if code, msg := put(t, base, "", strings.NewReader("x")); code != http.StatusOK || msg != "x" {
		t.Fatalf("without the header: %d %q", code, msg)
	}
	if s := <-got; s.ok {
		t.Errorf("a request without %s has a deadline %v", wire.HeaderObjectTimeout, s.deadline)
	}

	// The deadline is set when the request arrives: after before, and
	// before the Func looks at it.
	before := time.Now()
	if code, msg := put(t, base, "3600000", strings.NewReader("x")); code != http.StatusOK || msg != "x" {
		t.Fatalf("with the header: %d %q", code, msg)
	}
	s := <-got
	if !s.ok {
		t.Fatal("the header set no deadline")
	}
	if s.deadline.Before(before.Add(time.Hour)) || s.deadline.After(s.at.Add(time.Hour)) {
		t.Errorf("deadline %v is not an hour after the request arrived (sent at %v, seen at %v)", s.deadline, before, s.at)
	}
}

func TestObjectTimeoutOutOfBoundsIsRefused(t *testing.T) {
	called := false
	base := serveRaw(t, func(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		called = true
		return in, nil
	})
	for _, v := range []string{"0", "soon", "3600001"} {
		code, msg := put(t, base, v, strings.NewReader("x"))
		if code != http.StatusBadRequest || !strings.Contains(msg, wire.HeaderObjectTimeout) {
			t.Errorf("%s: %s: %d %q, want 400 naming the header", wire.HeaderObjectTimeout, v, code, msg)
		}
	}
	if called {
		t.Error("the Func ran for a request that was refused")
	}
}

// A Func that stops reading a large body is stopped when the agent's time
// for the object has passed. The client keeps sending, so the server never
// reaches the body's end, where net/http would notice a client that went
// away: only the header can end the Func, and without it this test waits
// for its own timeout.
func TestObjectTimeoutStopsAFuncThatStoppedReading(t *testing.T) {
	base := serveRaw(t, func(ctx context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		if _, err := io.ReadFull(in, make([]byte, 1024)); err != nil {
			return nil, err
		}
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	body := transformertest.NewEndlessBody()
	defer body.Close()
	code, msg := put(t, base, "20", body)
	if code == http.StatusOK || !strings.Contains(msg, "object timeout of 20ms passed") {
		t.Errorf("got %d %q, want the object timeout as the error", code, msg)
	}
}
