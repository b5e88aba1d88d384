package ioshim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/mlkube/mlkube/runtimes/proc"
	"github.com/mlkube/mlkube/sdk/transformer"
)

// Runner runs a command once per object; its Transform is a transformer.Func.
type Runner struct {
	command []string
	// slots bounds the commands running at once, so that a burst of objects
	// cannot fork-bomb the pod.
	slots chan struct{}
	// stderr, when not nil, also receives every command's stderr (the shim
	// passes it to its own, so that it reaches the container log).
	stderr io.Writer
}

var _ transformer.Func = (*Runner)(nil).Transform

// NewRunner runs command (the program, then its arguments) for every object,
// at most concurrency at once; stderr, if not nil, receives the commands'
// stderr besides their error messages.
func NewRunner(command []string, concurrency int, stderr io.Writer) (*Runner, error) {
	if err := checkCommand(command, concurrency); err != nil {
		return nil, err
	}
	return &Runner{command: command, slots: make(chan struct{}, concurrency), stderr: stderr}, nil
}

// checkCommand checks a runner's command and concurrency.
func checkCommand(command []string, concurrency int) error {
	if len(command) == 0 {
		return errors.New("no command to run")
	}
	if concurrency < 1 {
		return fmt.Errorf("concurrency %d: want at least 1", concurrency)
	}
	return nil
}

// Transform starts the command with in as its stdin and returns its stdout.
// The result ends with an error if the command fails, and its Close (which
// the SDK calls) kills the command if it still runs, so a client that goes
// away never leaves one behind.
func (r *Runner) Transform(ctx context.Context, in io.Reader, object, args string) (io.Reader, error) {
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	run := &run{ctx: ctx, release: func() { <-r.slots }, tail: &proc.Tail{Size: StderrTail}}
	cmd := exec.CommandContext(ctx, r.command[0], r.command[1:]...)
	proc.KillGroupOnCancel(cmd)
	cmd.Env = append(os.Environ(), EnvArgs+"="+args, EnvObject+"="+object)
	cmd.Stdin = in
	cmd.Stderr = run.tail
	if r.stderr != nil {
		cmd.Stderr = io.MultiWriter(run.tail, r.stderr)
	}
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		run.release()
		if ctx.Err() != nil {
			err = context.Cause(ctx) // the agent's time for the object ran out first
		}
		return nil, fmt.Errorf("start %s: %w", r.command[0], err)
	}
	run.cmd, run.stdout = cmd, stdout
	return run, nil
}

// run is one command's result: its stdout, then the verdict of its exit.
type run struct {
	ctx     context.Context
	cmd     *exec.Cmd
	stdout  io.Reader
	tail    *proc.Tail
	release func()

	once sync.Once
	err  error // the exit's verdict, set by finish
}

// Read reads stdout; at its end it waits for the command and reports a
// failed exit as the error instead of io.EOF.
func (r *run) Read(p []byte) (int, error) {
	n, err := r.stdout.Read(p)
	if errors.Is(err, io.EOF) {
		if werr := r.finish(false); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// Close kills the command if it has not exited yet and waits for it.
func (r *run) Close() error {
	// Read reports the exit's verdict at stdout's end; a command killed here
	// because its result was abandoned is no failure of the reader's.
	_ = r.finish(true)
	return nil
}

// finish waits for the command once, after killing its process group when
// kill is set, and frees its slot.
func (r *run) finish(kill bool) error {
	r.once.Do(func() {
		defer r.release()
		if kill {
			// Unread stdout or a process still running: the result was
			// abandoned. Killing the group also ends grandchildren that hold
			// the pipes, on which Wait would otherwise block.
			proc.KillGroup(r.cmd.Process)
		}
		r.err = r.verdict(r.cmd.Wait())
	})
	return r.err
}

// verdict turns Wait's error into the object's error.
func (r *run) verdict(err error) error {
	if err == nil {
		return nil
	}
	if cerr := context.Cause(r.ctx); cerr != nil {
		return fmt.Errorf("%s killed: %w", r.cmd.Args[0], cerr)
	}
	exit, ok := errors.AsType[*exec.ExitError](err)
	if !ok {
		return fmt.Errorf("%s: %w", r.cmd.Args[0], err)
	}
	how := fmt.Sprintf("exited with status %d", exit.ExitCode())
	if exit.ExitCode() < 0 {
		how = "was killed: " + exit.String()
	}
	msg := fmt.Sprintf("%s %s", r.cmd.Args[0], how)
	if tail := r.tail.String(); tail != "" {
		msg += "; stderr:\n" + tail
	}
	return errors.New(msg)
}
