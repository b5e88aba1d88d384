package ioshim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// stalledObjectIsGivenUp sends an object with args "stall", on which s's
// command stops reading, with the agent's object timeout, then an object
// that works. Both modes run one command at a time here, so the second
// object is served only if the stalled command was killed and its slot
// freed. The stall is seen only through the header: net/http notices a
// client that went away only after the body's end, which never comes.
func stalledObjectIsGivenUp(t *testing.T, s *transformertest.Server) {
	t.Helper()
	body := transformertest.NewEndlessBody()
	defer body.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, wire.ObjectURL(s.URL, "big", wire.Query{Args: "stall"}), body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(wire.HeaderObjectTimeout, "300")
	resp, err := s.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK || !strings.Contains(string(msg), "object timeout of 300ms passed") {
		t.Errorf("stalled object: %d %q, want the object timeout as its error", resp.StatusCode, msg)
	}
	got, err := s.Transform(t.Context(), transformertest.HPush, "next", "", []byte("next object"))
	if err != nil || string(got) != "next object" {
		t.Errorf("the object after the stalled one: %q, %v", got, err)
	}
}

func TestPerObjectCommandThatStopsReadingIsKilledAtTheObjectTimeout(t *testing.T) {
	// sleep runs as a child of the shell, not in its place: killing the shell alone would leave
	// it holding the command's output open, and the object would never end.
	stalledObjectIsGivenUp(t, serve(t, 1, "sh", "-c", `if [ "$`+EnvArgs+`" = stall ]; then sleep 1000; exit 0; fi; exec cat`))
}

func TestPersistentCommandThatStopsReadingIsKilledAtTheObjectTimeout(t *testing.T) {
	stalledObjectIsGivenUp(t, servePersistent(t, 1))
}

// An object that waits for a slot until its time is up fails with its context's cause (the
// agent's object timeout, as the SDK words it), not a bare "context deadline exceeded".
func TestObjectWaitingForASlotFailsWithTheCause(t *testing.T) {
	r, err := NewRunner([]string{"sh", "-c", "sleep 1000; exit 0"}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	holding, stop := context.WithCancel(t.Context())
	defer stop()
	out, err := r.Transform(holding, strings.NewReader(""), "first", "")
	if err != nil {
		t.Fatal(err)
	}
	defer out.(io.Closer).Close()
	cause := errors.New("the agent's object timeout of 20ms passed")
	ctx, cancel := context.WithTimeoutCause(t.Context(), 20*time.Millisecond, cause)
	defer cancel()
	if _, err := r.Transform(ctx, strings.NewReader("x"), "second", ""); !errors.Is(err, cause) {
		t.Errorf("an object that waited for the one slot past its time: %v, want its cause", err)
	}
}
