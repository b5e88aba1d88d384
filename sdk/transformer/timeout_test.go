package transformer_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// put sends body to object o of s with the object timeout header set to
// timeout (none when empty) and returns the answer's status and body.
func put(t *testing.T, s *transformertest.Server, timeout string, body io.Reader) (int, string) {
	t.Helper()
	header := map[string]string{wire.HeaderTransformerToken: s.Token}
	if timeout != "" {
		header[wire.HeaderObjectTimeout] = timeout
	}
	return sendWith(t, s, http.MethodPut, "/o", header, body)
}

func TestObjectTimeoutBoundsTheFuncsContext(t *testing.T) {
	type observed struct {
		deadline time.Time
		ok       bool
		at       time.Time
	}
	got := make(chan observed, 1)
	s := transformertest.NewServer(t, func(ctx context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		dl, ok := ctx.Deadline()
		got <- observed{dl, ok, time.Now()}
		return in, nil
	})

	if code, msg := put(t, s, "", strings.NewReader("x")); code != http.StatusOK || msg != "x" {
		t.Fatalf("without the header: %d %q", code, msg)
	}
	if seen := <-got; seen.ok {
		t.Errorf("a request without %s has a deadline %v", wire.HeaderObjectTimeout, seen.deadline)
	}

	// The deadline is set when the request arrives: after before, and
	// before the Func looks at it.
	before := time.Now()
	if code, msg := put(t, s, "3600000", strings.NewReader("x")); code != http.StatusOK || msg != "x" {
		t.Fatalf("with the header: %d %q", code, msg)
	}
	seen := <-got
	if !seen.ok {
		t.Fatal("the header set no deadline")
	}
	if seen.deadline.Before(before.Add(time.Hour)) || seen.deadline.After(seen.at.Add(time.Hour)) {
		t.Errorf("deadline %v is not an hour after the request arrived (sent at %v, seen at %v)", seen.deadline, before, seen.at)
	}
}

func TestObjectTimeoutOutOfBoundsIsRefused(t *testing.T) {
	var c counting
	s := transformertest.NewServer(t, c.fn)
	for _, v := range []string{"0", "soon", "28800001"} {
		code, msg := put(t, s, v, strings.NewReader("x"))
		if code != http.StatusBadRequest || !strings.Contains(msg, wire.HeaderObjectTimeout) {
			t.Errorf("%s: %s: %d %q, want 400 naming the header", wire.HeaderObjectTimeout, v, code, msg)
		}
	}
	if n := c.calls.Load(); n != 0 {
		t.Errorf("the Func ran %d times for requests that were refused", n)
	}
}

// A Func that stops reading a large body is stopped when the agent's time
// for the object has passed. The client keeps sending, so the server never
// reaches the body's end, where net/http would notice a client that went
// away: only the header can end the Func, and without it this test waits
// for its own timeout.
func TestObjectTimeoutStopsAFuncThatStoppedReading(t *testing.T) {
	s := transformertest.NewServer(t, func(ctx context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		if _, err := io.ReadFull(in, make([]byte, 1024)); err != nil {
			return nil, err
		}
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
	body := transformertest.NewEndlessBody()
	defer body.Close()
	code, msg := put(t, s, "20", body)
	if code == http.StatusOK || !strings.Contains(msg, "object timeout of 20ms passed") {
		t.Errorf("got %d %q, want the object timeout as the error", code, msg)
	}
}
