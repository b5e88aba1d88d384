package python

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mlkube/mlkube/runtimes/proc"
	"github.com/mlkube/mlkube/sdk/transformer"
)

// Frame status bytes; see worker.py.
const (
	statusOK        = '0'
	statusError     = '1'
	statusLoadError = '2'
	kindCall        = 'c'
	kindName        = 'n'
	kindArgs        = 'a'
)

// stderrTail is how much of a dead worker's stderr its error quotes.
const stderrTail = 4 << 10

// LoadError is a source that does not load: it does not compile, raises, or
// lacks the function. Its message names the variable at fault.
type LoadError struct{ Message string }

func (e *LoadError) Error() string { return e.Message }

// worker is one Python process. It serves one call at a time.
type worker struct {
	cmd    *exec.Cmd
	in     *os.File // the worker's stdin
	out    *bufio.Reader
	outF   *os.File // the worker's stdout
	tail   *proc.Tail
	exited chan struct{} // closed once the process has been waited for
	err    error         // Wait's error, set before exited closes
	broken atomic.Bool   // killed, or a call left the framing unusable
}

// workerSpec is how to start a worker.
type workerSpec struct {
	python string
	script string
	path   []string // put first on sys.path
	conf   Config
	stderr io.Writer // also receives the worker's stderr, if not nil
}

// startWorker starts a worker and waits for its greeting: ready, or a
// *LoadError.
func startWorker(ctx context.Context, s workerSpec) (*worker, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	w := &worker{in: stdinW, outF: stdoutR, out: bufio.NewReaderSize(stdoutR, 64<<10),
		tail: &proc.Tail{Size: stderrTail}, exited: make(chan struct{})}
	// Pipes of our own rather than StdinPipe/StdoutPipe: Wait, which runs as
	// soon as the process ends, would close those under a reader still
	// reading the last answer.
	w.cmd = exec.Command(s.python, append([]string{"-u", s.script}, s.path...)...)
	w.cmd.Env = append(os.Environ(), EnvSource+"="+s.conf.Source, EnvFunction+"="+s.conf.Function,
		"PYTHONDONTWRITEBYTECODE=1")
	w.cmd.Stdin, w.cmd.Stdout, w.cmd.Stderr = stdinR, stdoutW, w.tail
	if s.stderr != nil {
		w.cmd.Stderr = io.MultiWriter(w.tail, s.stderr)
	}
	// Grandchildren holding stderr must not keep Wait from returning.
	w.cmd.WaitDelay = time.Second
	proc.OwnGroup(w.cmd)
	// A runtime killed outright must not leave workers behind.
	w.cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	err = w.cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, fmt.Errorf("start %s: %w", s.python, err)
	}
	go func() {
		w.err = w.cmd.Wait()
		close(w.exited)
	}()
	defer w.killIfDone(ctx)()
	status, msg, err := w.readFrame()
	switch {
	case err != nil:
		w.kill()
		return nil, w.deathError("at start", ctx.Err())
	case status == statusLoadError:
		w.kill()
		return nil, &LoadError{Message: string(msg)}
	case status != statusOK:
		w.kill()
		return nil, fmt.Errorf("python worker: unexpected greeting %q", status)
	}
	return w, nil
}

// call runs the function on data, the object's name and the request's args
// going first in frames of their own (the worker passes them if the
// function's signature asks). A Python exception is an error with the
// worker still usable; any other error leaves the worker dead. When ctx ends
// first, the worker is killed and ctx's error returned.
func (w *worker) call(ctx context.Context, data []byte, object, args string) ([]byte, error) {
	if len(data) > math.MaxUint32 {
		return nil, transformer.StatusError(http.StatusRequestEntityTooLarge,
			fmt.Errorf("%d bytes do not fit one call: set a chunk size", len(data)))
	}
	defer w.killIfDone(ctx)()
	// One write for the small frames and the call's header; names and args
	// are bounded far below 4 GiB by the agent (1 KiB, 4 KiB).
	head := make([]byte, 0, 15+len(object)+len(args))
	head = appendFrame(head, kindName, object)
	head = appendFrame(head, kindArgs, args)
	head = append(head, kindCall)
	head = binary.BigEndian.AppendUint32(head, uint32(len(data)))
	_, err := w.in.Write(head)
	if err == nil {
		_, err = w.in.Write(data)
	}
	var status byte
	var out []byte
	if err == nil {
		status, out, err = w.readFrame()
	}
	if err != nil {
		w.kill()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, w.deathError("while transforming", nil)
	}
	switch status {
	case statusOK:
		return out, nil
	case statusError:
		return nil, errors.New(string(out))
	}
	w.kill()
	return nil, fmt.Errorf("python worker: unexpected answer %q", status)
}

func appendFrame(b []byte, kind byte, payload string) []byte {
	b = append(b, kind)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// readFrame reads one frame from the worker.
func (w *worker) readFrame() (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(w.out, hdr[:]); err != nil {
		return 0, nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(hdr[1:]))
	if _, err := io.ReadFull(w.out, buf); err != nil {
		return 0, nil, err
	}
	return hdr[0], buf, nil
}

// deathError waits for the dead worker and describes its end; cause, if not
// nil, is why it was killed.
func (w *worker) deathError(when string, cause error) error {
	<-w.exited
	msg := fmt.Sprintf("python worker died %s", when)
	switch {
	case cause != nil:
		msg += ": " + cause.Error()
	case w.err != nil:
		msg += ": " + w.err.Error()
	default:
		msg += " (exit status 0)"
	}
	if tail := w.tail.String(); tail != "" {
		msg += "; stderr:\n" + tail
	}
	return errors.New(msg)
}

// killIfDone kills the worker if ctx ends before the returned func is
// called. When ctx ends just as the worker's work does, the kill is already
// under way in a goroutine of its own when that func runs: the worker is
// marked broken there and then, or it could go back to the pool and be
// killed under the next object.
func (w *worker) killIfDone(ctx context.Context) func() {
	stop := context.AfterFunc(ctx, w.kill)
	return func() {
		if !stop() {
			w.broken.Store(true)
		}
	}
}

// kill ends the worker and whatever it started; it is safe to call more than
// once and after the worker has exited.
func (w *worker) kill() {
	w.broken.Store(true)
	select {
	case <-w.exited:
	default:
		proc.KillGroup(w.cmd.Process)
	}
}

// dead reports whether the worker cannot take another call.
func (w *worker) dead() bool {
	select {
	case <-w.exited:
		return true
	default:
		return w.broken.Load()
	}
}

// stop ends an idle worker: closing its stdin asks it to exit; it is killed
// if it has not done so when ctx ends.
func (w *worker) stop(ctx context.Context) {
	w.in.Close()
	select {
	case <-w.exited:
	case <-ctx.Done():
		w.kill()
		<-w.exited
	}
	w.outF.Close()
}
