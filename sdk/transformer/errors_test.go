package transformer_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/ws"
	"github.com/mlkube/mlkube/sdk/transformer"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// failing fails objects by name and echoes the others.
func failing(_ context.Context, in io.Reader, object, _ string) (io.Reader, error) {
	switch object {
	case "func-error":
		return nil, fmt.Errorf("cannot transform %s", object)
	case "bad-args":
		return nil, transformer.StatusError(http.StatusBadRequest, errors.New("unknown args"))
	case "early-error":
		return iotest.ErrReader(errors.New("result failed at once")), nil
	case "ignores-input":
		return strings.NewReader("short answer"), nil
	case "late-error":
		// Fails after more than one buffer has been answered.
		return io.MultiReader(io.LimitReader(in, 100<<10), iotest.ErrReader(errors.New("result failed late"))), nil
	}
	return in, nil
}

// remote asserts that err is a *RemoteError.
func remote(t *testing.T, err error) *transformertest.RemoteError {
	t.Helper()
	re, ok := errors.AsType[*transformertest.RemoteError](err)
	if !ok {
		t.Fatalf("error = %v, want a *RemoteError", err)
	}
	return re
}

func TestObjectErrors(t *testing.T) {
	s := transformertest.NewServer(t, failing)
	in := randomBytes(1 << 20)
	cases := map[string]struct {
		object     string
		wantStatus int // over HTTP; ws answers the message only
		wantMsg    string
	}{
		"func error":         {object: "func-error", wantStatus: 500, wantMsg: "cannot transform func-error"},
		"status error":       {object: "bad-args", wantStatus: 400, wantMsg: "unknown args"},
		"early result error": {object: "early-error", wantStatus: 500, wantMsg: "result failed at once"},
	}
	for _, m := range transformertest.Mechanisms {
		for name, tc := range cases {
			t.Run(string(m)+"/"+name, func(t *testing.T) {
				_, err := s.Transform(t.Context(), m, tc.object, "", in)
				re := remote(t, err)
				wantStatus := tc.wantStatus
				if m == transformertest.WS || m == transformertest.WSFQN {
					wantStatus = 0
				}
				if re.Status != wantStatus || re.Message != tc.wantMsg {
					t.Errorf("error = %d %q, want %d %q", re.Status, re.Message, wantStatus, tc.wantMsg)
				}
				// The next object succeeds; over ws on the same connection.
				got, err := s.Transform(t.Context(), m, "fine", "", in)
				if err != nil {
					t.Fatal(err)
				}
				transformertest.CheckBytes(t, got, in)
			})
		}
	}
}

// A Func that leaves its input unread still answers, and the next object on
// the same client goes through.
func TestUnreadInput(t *testing.T) {
	s := transformertest.NewServer(t, failing)
	in := randomBytes(3 << 20)
	for _, m := range transformertest.Mechanisms {
		t.Run(string(m), func(t *testing.T) {
			for range 3 {
				got, err := s.Transform(t.Context(), m, "ignores-input", "", in)
				if err != nil || string(got) != "short answer" {
					t.Fatalf("got %q, %v; want the short answer", got, err)
				}
				got, err = s.Transform(t.Context(), m, "fine", "", in)
				if err != nil {
					t.Fatal(err)
				}
				transformertest.CheckBytes(t, got, in)
			}
		})
	}
}

func TestWSErrorKeepsConnection(t *testing.T) {
	s := transformertest.NewServer(t, failing)
	c, err := transformertest.DialWS(t.Context(), s.URL, s.Token)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	in := randomBytes(3 << 20)
	for i, object := range []string{"func-error", "fine", "early-error", "", "fine", "func-error", "fine"} {
		var out strings.Builder
		err := c.Do(t.Context(), wire.Control{Object: object}, strings.NewReader(string(in)), &out)
		switch object {
		case "fine":
			if err != nil {
				t.Fatalf("object %d: %v", i, err)
			}
			transformertest.CheckBytes(t, []byte(out.String()), in)
		case "":
			if re := remote(t, err); re.Message != wire.ErrNoObject.Error() {
				t.Errorf("object %d: error %q, want %q", i, re.Message, wire.ErrNoObject)
			}
		default:
			remote(t, err)
		}
	}
}

// A result that fails after its answer started must not pass for a short
// success: HTTP breaks the response, ws closes the connection.
func TestResultFailsMidAnswer(t *testing.T) {
	s := transformertest.NewServer(t, failing)
	in := randomBytes(1 << 20)
	for _, m := range transformertest.Mechanisms {
		t.Run(string(m), func(t *testing.T) {
			_, err := s.Transform(t.Context(), m, "late-error", "", in)
			if err == nil {
				t.Fatal("a result that failed mid-answer was taken for a success")
			}
			if _, ok := errors.AsType[*transformertest.RemoteError](err); ok {
				t.Fatalf("error = %v, want a broken answer", err)
			}
			if m == transformertest.WS || m == transformertest.WSFQN {
				if got := ws.CloseStatus(err); got != ws.StatusInternalError {
					t.Errorf("close status = %v (%v), want %v", got, err, ws.StatusInternalError)
				}
			}
			// The transformer keeps serving.
			if _, err := s.Transform(t.Context(), m, "fine", "", in); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestHPullSourceErrors(t *testing.T) {
	s := transformertest.NewServer(t, echo)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "http://" + ln.Addr().String() + wire.PathInflight + rand.Text()
	ln.Close()
	stored := s.PutSource(nil)
	cases := map[string]struct {
		src        string
		wantStatus int
	}{
		"unreachable": {src: unreachable, wantStatus: http.StatusBadGateway},
		"not found":   {src: strings.TrimSuffix(stored, path.Base(stored)) + rand.Text(), wantStatus: http.StatusNotFound},
		"not http":    {src: "file:///etc/passwd", wantStatus: http.StatusBadRequest},
		"no host":     {src: "http:///o", wantStatus: http.StatusBadRequest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := s.DoSrc(t.Context(), "o", "", tc.src, io.Discard)
			if re := remote(t, err); re.Status != tc.wantStatus || re.Message == "" {
				t.Errorf("error = %d %q, want %d with a message", re.Status, re.Message, tc.wantStatus)
			}
		})
	}
}

func TestBadRequests(t *testing.T) {
	s := transformertest.NewServer(t, echo)
	cases := map[string]struct {
		method, path string
		wantStatus   int
	}{
		"get without source": {method: "GET", path: "/o", wantStatus: 400},
		"post":               {method: "POST", path: "/o", wantStatus: 405},
		"put without object": {method: "PUT", path: "/", wantStatus: 400},
		"ws without upgrade": {method: "GET", path: "/ws", wantStatus: http.StatusUpgradeRequired},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := transformertest.DoHTTP(t.Context(), s.Client, tc.method, s.URL+tc.path, strings.NewReader("x"), io.Discard)
			if re := remote(t, err); re.Status != tc.wantStatus {
				t.Errorf("status = %d (%q), want %d", re.Status, re.Message, tc.wantStatus)
			}
		})
	}
}
