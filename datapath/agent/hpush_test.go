package agent

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// TestHPushStalledUpload checks that a small object whose client pauses
// past the object timeout while it sends it (hpush reads such bodies whole
// before sending them) is answered 504 with the message it had when the
// transport streamed the body. Either way the answer waits for the rest of
// the body.
func TestHPushStalledUpload(t *testing.T) {
	e := newEnv(t)
	e.addTransform("echo", etlv1alpha1.CommHPush, "", echo)
	e.setTimeout("echo", 50*time.Millisecond)
	body, upload := io.Pipe()
	defer upload.Close()
	go func() {
		_, _ = upload.Write([]byte("half")) // of the 8 bytes announced
		// Not a timed assertion: only the order matters, the pause is
		// well past the timeout.
		time.Sleep(200 * time.Millisecond)
		_, _ = upload.Write([]byte("rest"))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, e.transformURL("echo", "obj", wire.Query{}), body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 8
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, body: data}
	if a.status != http.StatusGatewayTimeout {
		t.Fatalf("status %d, want 504: %s", a.status, a.body)
	}
	// The message is the one Client.Do gave when the transport read the body.
	if got := a.apiError(t).Error; !strings.HasPrefix(got, `object timeout: Put "`) || !strings.HasSuffix(got, `": context deadline exceeded`) {
		t.Errorf("error %q, want the object timeout of the PUT to the transformer", got)
	}
}

// TestTransformerIsToldTheObjectTimeout: over every HTTP mechanism the
// transformer's Func runs under a deadline no later than the agent's own
// for the object (wire.HeaderObjectTimeout), so a transformer stops the work
// the agent has given up on even when it cannot see the connection close.
// The deadline is at least the agent's (it is rounded up, and sent after
// the agent set its own) and at most the timeout after the Func saw it.
func TestTransformerIsToldTheObjectTimeout(t *testing.T) {
	const timeout = 7 * time.Minute
	e := newEnv(t)
	e.writeObject("dir/obj", []byte("data"))
	for _, comm := range []etlv1alpha1.Communication{etlv1alpha1.CommHPush, etlv1alpha1.CommHPull, etlv1alpha1.CommIO} {
		for _, arg := range []etlv1alpha1.Argument{"", etlv1alpha1.ArgFQN} {
			name := strings.ToLower(string(comm) + string(arg))
			type seen struct {
				deadline, at time.Time
				ok           bool
			}
			got := make(chan seen, 1)
			e.addTransform(name, comm, arg, func(ctx context.Context, in io.Reader, _, _ string) (io.Reader, error) {
				dl, ok := ctx.Deadline()
				got <- seen{dl, time.Now(), ok}
				return in, nil
			})
			e.setTimeout(name, timeout)
			before := time.Now()
			if a := e.get(name, "dir/obj", wire.Query{}); a.status != http.StatusOK || string(a.body) != "data" {
				t.Fatalf("%s %s: %d %s", comm, arg, a.status, a.body)
			}
			s := <-got
			switch {
			case !s.ok:
				t.Errorf("%s %s: the Func ran without a deadline", comm, arg)
			case s.deadline.Before(before.Add(timeout)) || s.deadline.After(s.at.Add(timeout)):
				t.Errorf("%s %s: deadline %v, want the agent's %v after the request (sent %v, seen %v)", comm, arg, s.deadline, timeout, before, s.at)
			}
		}
	}
}

// openFilesEndingIn lists the files this process holds open whose path ends in suffix.
func openFilesEndingIn(t *testing.T, suffix string) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	var open []string
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasSuffix(target, suffix) {
			open = append(open, target)
		}
	}
	return open
}

// TestStoredObjectClosedOnceSent: a stored object read whole into its request
// to the transformer is closed then, not held while the transformer works.
func TestStoredObjectClosedOnceSent(t *testing.T) {
	e := newEnv(t)
	e.writeObject("dir/small-stored", []byte("data"))
	var held []string
	e.addTransform("look", etlv1alpha1.CommHPush, "", func(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		data, err := io.ReadAll(in)
		held = openFilesEndingIn(t, "/dir/small-stored")
		return bytes.NewReader(data), err
	})
	if a := e.get("look", "dir/small-stored", wire.Query{}); a.status != http.StatusOK || string(a.body) != "data" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if len(held) != 0 {
		t.Errorf("the agent held %v open while the transformer worked", held)
	}
}

// TestPipelineLongerThanAnHourIsServed: the time a pipeline's stages share
// may pass one Transform's longest object timeout, and the transformers
// accept it.
func TestPipelineLongerThanAnHourIsServed(t *testing.T) {
	e := newEnv(t)
	var firstDeadline time.Time
	e.addTransform("first", etlv1alpha1.CommHPush, "", func(ctx context.Context, in io.Reader, _, _ string) (io.Reader, error) {
		firstDeadline, _ = ctx.Deadline()
		return in, nil
	})
	e.addTransform("second", etlv1alpha1.CommHPush, "", echo)
	for _, name := range []string{"first", "second"} {
		e.setTimeout(name, etlv1alpha1.MaxObjectTimeout)
	}
	before := time.Now()
	if a := e.put("first>>second", "obj", wire.Query{}, []byte("x")); a.status != http.StatusOK || string(a.body) != "x" {
		t.Errorf("a pipeline of two hours: %d %s", a.status, a.body)
	}
	// The first stage is told the time of the whole pipeline, the sum of its stages' timeouts
	// (less what the request took to reach it), not one stage's hour.
	if want := before.Add(2*etlv1alpha1.MaxObjectTimeout - time.Minute); firstDeadline.Before(want) {
		t.Errorf("the first stage's deadline is %v after the request; want about %v", firstDeadline.Sub(before), 2*etlv1alpha1.MaxObjectTimeout)
	}
}

// pastDeadline is a context whose deadline has passed while its timer has not yet ended it.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestTimedOutBeforeTheTimerFires: an answer that arrives after the object's deadline is the
// object timing out, even when the agent's own timer has not yet ended its context.
func TestTimedOutBeforeTheTimerFires(t *testing.T) {
	future, cancelFuture := context.WithTimeout(context.Background(), time.Hour)
	defer cancelFuture()
	expired, cancelExpired := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancelExpired()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for name, tc := range map[string]struct {
		ctx  context.Context
		want bool
	}{
		"deadline passed, timer not fired": {pastDeadline{context.Background()}, true},
		"deadline passed, timer fired":     {expired, true},
		"deadline ahead":                   {future, false},
		"no deadline":                      {context.Background(), false},
		"canceled, no deadline":            {canceled, false},
	} {
		if got := timedOut(tc.ctx); got != tc.want {
			t.Errorf("%s: timedOut = %v, want %v", name, got, tc.want)
		}
	}
}
