package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/loadgen"
	"github.com/mlkube/mlkube/internal/ws"
)

// reauthEnv is an env whose stream "w" alice may use, re-authorized after
// every, and alice's open stream on it.
func reauthEnv(t *testing.T, every time.Duration) (*rbac, loadgen.AgentStream) {
	f := &rbac{allowed: map[string]map[string]bool{}}
	f.grant("alice", use("default", "w"))
	e := newEnv(t, func(o *Options) { o.Access, o.StreamReauthorize = f, every })
	e.addTransform("w", etlv1alpha1.CommWS, "", tag("w"))
	s, err := loadgen.DialAgentStream(context.Background(), loadgen.StreamURL(e.url, "default", "w"), "alice")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return f, s
}

// roundTrip sends one object and returns its answer.
func roundTrip(s loadgen.AgentStream, data string) (string, error) {
	if err := s.Send([]byte(data)); err != nil {
		return "", err
	}
	var out bytes.Buffer
	err := s.Receive(&out)
	return out.String(), err
}

// TestStreamClosesWhenRBACWithdrawsIt: a stream opened while its caller
// may use the Transform is closed with 1008 and a reason naming the caller
// and the Transform at the first object after the right is gone, rather
// than serving for as long as the client keeps it open (issue 24).
func TestStreamClosesWhenRBACWithdrawsIt(t *testing.T) {
	f, s := reauthEnv(t, 0)
	if out, err := roundTrip(s, "a"); err != nil || out != "a|w:" {
		t.Fatalf("while allowed: %q, %v", out, err)
	}
	f.revoke("alice", use("default", "w"))
	_, err := roundTrip(s, "b")
	var closed *ws.CloseError
	if !errors.As(err, &closed) || closed.Code != ws.StatusPolicyViolation ||
		!strings.Contains(closed.Reason, "RBAC no longer lets alice use Transform default/w") {
		t.Fatalf("after the RoleBinding went: %v; want the stream closed with 1008 naming alice and default/w", err)
	}
}

// TestStreamReauthorizationIsBounded: within Options.StreamReauthorize the
// stream asks nothing again, so its cost is one question per interval, not
// per object; a removed binding takes effect at the interval's end.
func TestStreamReauthorizationIsBounded(t *testing.T) {
	f, s := reauthEnv(t, time.Hour)
	opened := f.askedCount()
	f.revoke("alice", use("default", "w"))
	for i := range 20 {
		if out, err := roundTrip(s, fmt.Sprint(i)); err != nil || out != fmt.Sprint(i)+"|w:" {
			t.Fatalf("object %d within the interval: %q, %v", i, out, err)
		}
	}
	if asked := f.askedCount() - opened; asked != 0 {
		t.Errorf("%d questions within the interval; want none", asked)
	}
}

// TestStreamReauthorizationWithoutAnswer: a re-check that gets no answer
// (the reviewer's rate, an API server away) fails that object with the
// reason, keeps the stream, and the next object asks again.
func TestStreamReauthorizationWithoutAnswer(t *testing.T) {
	f, s := reauthEnv(t, 0)
	f.setUnanswered(fmt.Errorf("%w: retry in 1 s", access.ErrThrottled))
	if _, err := roundTrip(s, "a"); err == nil || !strings.Contains(err.Error(), "re-authorizing the stream") || !strings.Contains(err.Error(), "retry in 1 s") {
		t.Fatalf("without an answer: %v; want the object failed saying why", err)
	}
	f.setUnanswered(nil)
	if out, err := roundTrip(s, "b"); err != nil || out != "b|w:" {
		t.Fatalf("once answered again: %q, %v", out, err)
	}
}

// TestStreamAnswersAnObjectRefusedBeforeItsBody: an object refused before
// its body is read (an fqn control; a re-check without an answer) gets its
// error message and the stream goes on. It once took the stream's handler
// down and left the stream hanging.
func TestStreamAnswersAnObjectRefusedBeforeItsBody(t *testing.T) {
	_, s := reauthEnv(t, time.Hour)
	ctrl, err := wire.MarshalControl(wire.Control{Object: "o", FQN: "o"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.C.WriteMessage(ws.Text, ctrl); err != nil {
		t.Fatal(err)
	}
	if err := s.Receive(io.Discard); err == nil || !strings.Contains(err.Error(), "streams carry bytes, not fqn") {
		t.Fatalf("an fqn object: %v; want it refused", err)
	}
	if out, err := roundTrip(s, "b"); err != nil || out != "b|w:" {
		t.Fatalf("the next object: %q, %v", out, err)
	}
}
