package ioshim

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// serve serves command through the shim on loopback.
func serve(t *testing.T, concurrency int, command ...string) *transformertest.Server {
	t.Helper()
	r, err := NewRunner(command, concurrency, nil)
	if err != nil {
		t.Fatal(err)
	}
	return transformertest.NewServer(t, r.Transform)
}

func TestCatEveryMechanism(t *testing.T) {
	echoesEveryObject(t, serve(t, 4, "cat"))
}

// echoesEveryObject checks that s answers every test object by every mechanism with the object.
func echoesEveryObject(t *testing.T, s *transformertest.Server) {
	t.Helper()
	transformertest.ForEach(t, func(t *testing.T, m transformertest.Mechanism, o transformertest.Object) {
		in := o.Bytes()
		got, err := s.Transform(t.Context(), m, o.Name, "", in)
		if err != nil {
			t.Fatal(err)
		}
		transformertest.CheckBytes(t, got, in)
	})
}

func TestMD5Sum(t *testing.T) {
	s := serve(t, 2, "md5sum")
	in := transformertest.Object{Name: "o", Size: 3 << 20}.Bytes()
	got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", in)
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(in)
	if want := hex.EncodeToString(sum[:]) + "  -\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestArgsAndObjectInEnv: args and the object's name reach the command in its
// environment, not in its arguments (no shell ever sees them).
func TestArgsAndObjectInEnv(t *testing.T) {
	s := serve(t, 1, "sh", "-c", `printf '%s|%s' "$`+EnvArgs+`" "$`+EnvObject+`"`)
	for _, m := range []transformertest.Mechanism{transformertest.HPush, transformertest.WS} {
		got, err := s.Transform(t.Context(), m, "dir/a b.txt", "x=1;$(reboot)", []byte("ignored"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "x=1;$(reboot)|dir/a b.txt"; string(got) != want {
			t.Errorf("%s: got %q, want %q", m, got, want)
		}
	}
}

// TestFailedExit: a non-zero exit fails the object with the status and the
// end of stderr, over HTTP and ws, and the next object works.
func TestFailedExit(t *testing.T) {
	s := serve(t, 1, "sh", "-c", `if [ "$`+EnvArgs+`" = fail ]; then echo first >&2; echo err >&2; exit 3; fi; cat`)
	for _, m := range []transformertest.Mechanism{transformertest.HPush, transformertest.WS} {
		_, err := s.Transform(t.Context(), m, "o", "fail", []byte("data"))
		re, ok := errors.AsType[*transformertest.RemoteError](err)
		if !ok {
			t.Fatalf("%s: err = %v, want a remote error", m, err)
		}
		if want := "sh exited with status 3; stderr:\nfirst\nerr"; re.Message != want {
			t.Errorf("%s: message %q, want %q", m, re.Message, want)
		}
		if m == transformertest.HPush && re.Status != http.StatusInternalServerError {
			t.Errorf("status %d, want 500", re.Status)
		}
		got, err := s.Transform(t.Context(), m, "o", "", []byte("next"))
		if err != nil || string(got) != "next" {
			t.Errorf("%s: next object = %q, %v", m, got, err)
		}
	}
}

// TestStderrTail: only the end of a long stderr is kept.
func TestStderrTail(t *testing.T) {
	s := serve(t, 1, "sh", "-c", `i=0; while [ $i -lt 2000 ]; do echo "line $i" >&2; i=$((i+1)); done; echo last >&2; exit 1`)
	_, err := s.Transform(t.Context(), transformertest.HPush, "o", "", nil)
	re, ok := errors.AsType[*transformertest.RemoteError](err)
	if !ok {
		t.Fatalf("err = %v, want a remote error", err)
	}
	if !strings.HasSuffix(re.Message, "line 1999\nlast") || strings.Contains(re.Message, "line 1\n") {
		t.Errorf("message does not end with stderr's tail:\n%s", re.Message)
	}
	if len(re.Message) > StderrTail+100 {
		t.Errorf("message is %d bytes, want about %d", len(re.Message), StderrTail)
	}
}

// TestFailureAfterOutput: a command that fails after writing more than the
// SDK's first buffer aborts the response; it is never taken for a result.
func TestFailureAfterOutput(t *testing.T) {
	s := serve(t, 1, "sh", "-c", `head -c 1000000 /dev/zero; exit 2`)
	if got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", nil); err == nil {
		t.Errorf("got %d bytes and no error", len(got))
	}
}

func TestCommandNotFound(t *testing.T) {
	s := serve(t, 1, "/nonexistent/transformer")
	_, err := s.Transform(t.Context(), transformertest.HPush, "o", "", []byte("x"))
	if re, ok := errors.AsType[*transformertest.RemoteError](err); !ok || !strings.Contains(re.Message, "/nonexistent/transformer") {
		t.Errorf("err = %v, want a remote error naming the command", err)
	}
}

// TestStreaming: the result flows while the object is still being sent. The
// sender holds the second half back until the first half came back, so a shim
// that buffered whole objects would deadlock (and fail by the deadline).
func TestStreaming(t *testing.T) {
	s := serve(t, 1, "cat")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	const half = 4 << 20
	in := transformertest.Object{Name: "o", Size: 2 * half}.Bytes()
	pr, pw := io.Pipe()
	reached := make(chan struct{})
	out := &signalWriter{at: half, reached: reached}
	go func() {
		pw.Write(in[:half])
		select {
		case <-reached:
		case <-ctx.Done():
		}
		pw.Write(in[half:])
		pw.Close()
	}()
	if err := transformertest.DoHTTP(ctx, s.Client, http.MethodPut, wire.ObjectURL(s.URL, "o", wire.Query{}), pr, out); err != nil {
		t.Fatal(err)
	}
	transformertest.CheckBytes(t, out.buf.Bytes(), in)
}

// signalWriter closes reached once it holds at bytes.
type signalWriter struct {
	buf     bytes.Buffer
	at      int
	reached chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if w.buf.Len() >= w.at && w.reached != nil {
		close(w.reached)
		w.reached = nil
	}
	return len(p), nil
}

// TestCancelKillsProcessGroup: when the object's context ends, the command
// and what it started are killed.
func TestCancelKillsProcessGroup(t *testing.T) {
	r, err := NewRunner([]string{"sh", "-c", `sleep 1000 & echo $$ $!; wait`}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	out, err := r.Transform(ctx, strings.NewReader(""), "o", "")
	if err != nil {
		t.Fatal(err)
	}
	var shell, sleeper int
	if _, err := fmt.Fscan(out, &shell, &sleeper); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := io.ReadAll(out); !errors.Is(err, context.Canceled) {
		t.Errorf("result error = %v, want context.Canceled", err)
	}
	out.(io.Closer).Close()
	for _, pid := range []int{shell, sleeper} {
		waitGone(t, pid)
	}
	// The slot is free again.
	out, err = r.Transform(t.Context(), strings.NewReader(""), "o", "")
	if err != nil {
		t.Fatal(err)
	}
	out.(io.Closer).Close()
}

// TestCloseKillsAbandonedCommand: a result closed before its end (the client
// went away mid-answer) kills the command and frees its slot.
func TestCloseKillsAbandonedCommand(t *testing.T) {
	r, err := NewRunner([]string{"sh", "-c", `echo $$; exec sleep 1000`}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Transform(t.Context(), strings.NewReader(""), "o", "")
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil {
		t.Fatal(err)
	}
	out.(io.Closer).Close()
	waitGone(t, pid)
	select {
	case r.slots <- struct{}{}:
	default:
		t.Error("slot not released")
	}
}

// TestConcurrencyBound: with every slot taken, the next object waits, and
// gives up when its context ends.
func TestConcurrencyBound(t *testing.T) {
	r, err := NewRunner([]string{"cat"}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	first, err := r.Transform(t.Context(), pr, "a", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Transform(ctx, strings.NewReader(""), "b", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("second object with all slots taken: %v, want context.Canceled", err)
	}
	pw.Close()
	if _, err := io.ReadAll(first); err != nil {
		t.Fatal(err)
	}
	first.(io.Closer).Close()
	second, err := r.Transform(t.Context(), strings.NewReader("x"), "b", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(second); string(got) != "x" || err != nil {
		t.Errorf("second object = %q, %v", got, err)
	}
	second.(io.Closer).Close()
}

// waitGone polls until pid has exited (a zombie counts as exited).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if errors.Is(err, os.ErrNotExist) || syscall.Kill(pid, 0) != nil {
			return
		}
		// Field 3 is the state; the command name before it is in parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("process %d still runs", pid)
}
