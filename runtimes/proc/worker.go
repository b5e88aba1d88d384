package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"
)

// StderrTail is how much of a dead worker's stderr its error quotes.
const StderrTail = 4 << 10

// Worker is a long-lived child process that serves one object at a time over its stdin and
// stdout, in a framing its runtime defines. It leads its own process group, dies with its parent,
// and counts as dead once killed, even before the kill has landed, so that a pool never hands
// it out again.
type Worker struct {
	// Name says what the worker is in error messages ("python worker").
	Name string
	Cmd  *exec.Cmd
	// In is the worker's stdin, Out its stdout, buffered.
	In  *os.File
	Out *bufio.Reader

	outF   *os.File
	tail   *Tail
	exited chan struct{} // closed once the process has been waited for
	err    error         // Wait's error, set before exited closes
	broken atomic.Bool   // killed, or a call left the framing unusable
}

// StartWorker starts cmd as a worker named name. Its stdin and stdout are pipes of the worker's
// own; its stderr goes to the tail its errors quote and, if not nil, to stderr too.
func StartWorker(name string, cmd *exec.Cmd, stderr io.Writer) (*Worker, error) {
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
	w := &Worker{Name: name, Cmd: cmd, In: stdinW, outF: stdoutR, Out: bufio.NewReaderSize(stdoutR, 64<<10),
		tail: &Tail{Size: StderrTail}, exited: make(chan struct{})}
	// Pipes of our own rather than StdinPipe/StdoutPipe: Wait, which runs as
	// soon as the process ends, would close those under a reader still
	// reading the last answer.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, w.tail
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(w.tail, stderr)
	}
	// Grandchildren holding stderr must not keep Wait from returning.
	cmd.WaitDelay = time.Second
	OwnGroup(cmd)
	// A runtime killed outright must not leave workers behind.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	err = cmd.Start()
	stdinR.Close()
	stdoutW.Close()
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	go func() {
		w.err = cmd.Wait()
		close(w.exited)
	}()
	return w, nil
}

// DeathError waits for the dead worker and describes its end; when says what it was doing ("at
// start", "while transforming") and cause, if not nil, is why it was killed.
func (w *Worker) DeathError(when string, cause error) error {
	<-w.exited
	msg := fmt.Sprintf("%s died %s", w.Name, when)
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

// KillIfDone kills the worker if ctx ends before the returned func is
// called. When ctx ends just as the worker's work does, the kill is already
// under way in a goroutine of its own when that func runs: the worker is
// marked broken there and then, or it could go back to the pool and be
// killed under the next object.
func (w *Worker) KillIfDone(ctx context.Context) func() {
	stop := context.AfterFunc(ctx, w.Kill)
	return func() {
		if !stop() {
			w.broken.Store(true)
		}
	}
}

// Kill ends the worker and whatever it started; it is safe to call more than
// once and after the worker has exited.
func (w *Worker) Kill() {
	w.broken.Store(true)
	select {
	case <-w.exited:
	default:
		_ = KillGroup(w.Cmd.Process) // gone already: exited closes soon
	}
}

// Dead reports whether the worker cannot take another object.
func (w *Worker) Dead() bool {
	select {
	case <-w.exited:
		return true
	default:
		return w.broken.Load()
	}
}

// Stop ends an idle worker: closing its stdin asks it to exit; it is killed
// if it has not done so when ctx ends.
func (w *Worker) Stop(ctx context.Context) {
	w.In.Close()
	select {
	case <-w.exited:
	case <-ctx.Done():
		w.Kill()
		<-w.exited
	}
	w.outF.Close()
}
