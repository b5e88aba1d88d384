package python

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mlkube/mlkube/runtimes/proc"
	"github.com/mlkube/mlkube/sdk/transformer"
)

// Options tune a Runtime.
type Options struct {
	// Python is the interpreter; default "python3".
	Python string
	// Workers is the number of worker processes, the most objects
	// transformed at once; default 1.
	Workers int
	// Stderr, if not nil, receives the workers' and pip's output.
	Stderr io.Writer
	// Log reports worker restarts; default slog.Default().
	Log *slog.Logger
}

// Runtime runs a Config's function in a pool of Python workers. Its
// Transform is a transformer.Func.
type Runtime struct {
	conf    Config
	spec    workerSpec
	dir     string
	workers *proc.Pool
}

var _ transformer.Func = (*Runtime)(nil).Transform

// Start installs conf's dependencies and starts the workers. A source that
// does not load is a *LoadError; a failed install names EnvDependencies.
func Start(ctx context.Context, conf Config, o Options) (_ *Runtime, err error) {
	if o.Python == "" {
		o.Python = "python3"
	}
	if o.Workers < 1 {
		o.Workers = 1
	}
	dir, err := os.MkdirTemp("", "mlkube-python-")
	if err != nil {
		return nil, err
	}
	r := &Runtime{conf: conf, dir: dir}
	r.spec = workerSpec{python: o.Python, script: filepath.Join(dir, "worker.py"), conf: conf, stderr: o.Stderr}
	r.workers = proc.NewPool(o.Workers, func(ctx context.Context) (*proc.Worker, error) {
		w, err := startWorker(ctx, r.spec)
		if err != nil {
			return nil, fmt.Errorf("start python worker: %w", err)
		}
		return w, nil
	}, o.Log)
	defer func() {
		if err != nil {
			r.workers.StopIdle(ctx)
			os.RemoveAll(dir)
		}
	}()
	if err := os.WriteFile(r.spec.script, workerScript, 0o600); err != nil {
		return nil, err
	}
	if conf.Dependencies != "" {
		site, err := installDependencies(ctx, o.Python, dir, conf.Dependencies, o.Stderr)
		if err != nil {
			return nil, err
		}
		r.spec.path = []string{site}
	}
	// The workers start now, so that a source that does not load fails the runtime's start.
	if err := r.workers.Fill(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Close stops the workers, waiting up to ctx for the busy ones, and removes
// the runtime's files.
func (r *Runtime) Close(ctx context.Context) error {
	defer os.RemoveAll(r.dir)
	return r.workers.Close(ctx)
}

// Transform takes a worker for the object; the result runs the function as
// it is read and gives the worker back when closed.
func (r *Runtime) Transform(ctx context.Context, in io.Reader, object, args string) (io.Reader, error) {
	w, err := r.workers.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &result{ctx: ctx, r: r, w: worker{w}, in: in, chunk: r.conf.ChunkSize, object: object, args: args}, nil
}

// result is one object's result: it reads the object a chunk at a time (or
// whole), calls the function and serves what it returned.
type result struct {
	ctx   context.Context
	r     *Runtime
	w     worker // its Worker nil once released
	in    io.Reader
	chunk int // 0: whole object
	// object and args go with every call, each chunk's too.
	object, args string

	pending []byte
	calls   int
	done    bool  // the input is used up
	err     error // sticky
}

func (res *result) Read(p []byte) (int, error) {
	for len(res.pending) == 0 {
		if res.err != nil {
			return 0, res.err
		}
		if res.done {
			res.Close()
			return 0, io.EOF
		}
		if err := res.next(); err != nil {
			res.err = err
			res.Close()
		}
	}
	n := copy(p, res.pending)
	res.pending = res.pending[n:]
	return n, nil
}

// next reads the next piece of the object and calls the function on it.
func (res *result) next() error {
	var data []byte
	if res.chunk == 0 {
		var err error
		if data, err = io.ReadAll(res.in); err != nil {
			return err
		}
		res.done = true
	} else {
		buf := make([]byte, res.chunk)
		n, err := io.ReadFull(res.in, buf)
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			res.done = true
		case err != nil:
			return err
		}
		if n == 0 && res.calls > 0 {
			return nil // the object ended on a chunk boundary
		}
		data = buf[:n]
	}
	res.calls++
	out, err := res.w.call(res.ctx, data, res.object, res.args)
	res.pending = out
	return err
}

// Close gives the worker back; the SDK calls it once it has read the result,
// or given up on it.
func (res *result) Close() error {
	if res.w.Worker != nil {
		res.r.workers.Release(res.w.Worker)
		res.w.Worker = nil
	}
	return nil
}

// installDependencies pip-installs the requirements into a directory under
// dir and returns it.
func installDependencies(ctx context.Context, python, dir, requirements string, stderr io.Writer) (string, error) {
	if out, err := exec.CommandContext(ctx, python, "-m", "pip", "--version").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s is set, but pip is not available to %s (%w): %s",
			EnvDependencies, python, err, bytes.TrimSpace(out))
	}
	file := filepath.Join(dir, "requirements.txt")
	if err := os.WriteFile(file, []byte(requirements), 0o600); err != nil {
		return "", err
	}
	site := filepath.Join(dir, "site-packages")
	cmd := exec.CommandContext(ctx, python, "-m", "pip", "install", "--no-input",
		"--disable-pip-version-check", "--target", site, "-r", file)
	tail := &proc.Tail{Size: proc.StderrTail}
	cmd.Stdout, cmd.Stderr = tail, tail
	if stderr != nil {
		cmd.Stdout = io.MultiWriter(tail, stderr)
		cmd.Stderr = cmd.Stdout
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: pip install failed (%w):\n%s", EnvDependencies, err, tail)
	}
	return site, nil
}
