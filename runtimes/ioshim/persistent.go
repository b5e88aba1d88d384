package ioshim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"

	"github.com/mlkube/mlkube/runtimes/proc"
	"github.com/mlkube/mlkube/sdk/ioframe"
	"github.com/mlkube/mlkube/sdk/transformer"
)

// Persistent runs long-lived commands that transform object after object in package ioframe's
// framing, one object at a time each; its Transform is a transformer.Func. A process per
// object costs a fork and an exec per object; this costs two pipe writes.
type Persistent struct {
	workers *proc.Pool
}

var _ transformer.Func = (*Persistent)(nil).Transform

// NewPersistent runs up to concurrency copies of command (the program, then its arguments),
// each started by the first object that needs it and again after it dies; stderr, if not nil,
// receives the commands' stderr besides their error messages, and log their restarts.
func NewPersistent(command []string, concurrency int, stderr io.Writer, log *slog.Logger) (*Persistent, error) {
	if err := checkCommand(command, concurrency); err != nil {
		return nil, err
	}
	name := "io command " + command[0]
	return &Persistent{workers: proc.NewPool(concurrency, func(context.Context) (*proc.Worker, error) {
		return proc.StartWorker(name, exec.Command(command[0], command[1:]...), stderr)
	}, log)}, nil
}

// Transform gives the object to an idle command, writing it in the background so that a command
// may stream its result while it reads, and returns the result as the command writes it. Its
// Close, which the SDK calls, gives the command back, or kills it if the result was abandoned.
func (p *Persistent) Transform(ctx context.Context, in io.Reader, object, args string) (io.Reader, error) {
	w, err := p.workers.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	f := &framed{ctx: ctx, pool: p.workers, w: w, body: ioframe.NewChunkReader(w.Out),
		wrote: make(chan error, 1), callOver: w.KillIfDone(ctx)}
	go f.write(w, in, object, args)
	return f, nil
}

// framed is one object's result from a persistent command.
type framed struct {
	ctx      context.Context
	pool     *proc.Pool
	w        *proc.Worker // nil once given back
	body     *ioframe.ChunkReader
	wrote    chan error // the request's writer's verdict
	callOver func()     // ends the kill on ctx's end
	err      error      // how the result ended, once w is nil
}

// write sends the request. A failure leaves the framing unusable, so it kills the command, after
// saying why: the reader, which then sees the command's stdout end, reports that reason.
func (f *framed) write(w *proc.Worker, in io.Reader, object, args string) {
	err := ioframe.WriteRequest(w.In, object, args, in)
	f.wrote <- err
	if err != nil {
		w.Kill()
	}
}

func (f *framed) Read(p []byte) (int, error) {
	if f.w == nil {
		return 0, f.err
	}
	n, err := f.body.Read(p)
	if err != nil {
		err = f.end(err)
	}
	return n, err
}

// end settles the object once its response has ended with err (io.EOF at its end, an
// *ioframe.ObjectError, or what broke it), gives the command back and returns the result's
// end.
func (f *framed) end(err error) error {
	oe, answered := errors.AsType[*ioframe.ObjectError](err)
	if errors.Is(err, io.EOF) || answered {
		// A command answers once it has read the whole object, so the writer is done or about
		// to be.
		select {
		case werr := <-f.wrote:
			if werr != nil {
				err = fmt.Errorf("write the object to %s: %w", f.w.Name, werr)
			} else if answered {
				err = errors.New(oe.Message)
			}
		case <-f.ctx.Done():
			err = context.Cause(f.ctx)
		}
	} else {
		f.w.Kill()
		var werr error
		select {
		case werr = <-f.wrote:
		default:
		}
		switch {
		case f.ctx.Err() != nil:
			err = context.Cause(f.ctx)
		case werr != nil:
			err = fmt.Errorf("write the object to %s: %w", f.w.Name, werr)
		case errors.Is(err, ioframe.ErrFraming) && !errors.Is(err, ioframe.ErrTruncated):
			// Alive but out of step: killed above, and the framing is why.
			err = f.w.DeathError("while transforming", err)
		default:
			err = f.w.DeathError("while transforming", nil)
		}
	}
	f.giveBack(err)
	return err
}

// giveBack ends the object with err and gives its command back: the pool replaces it if it was
// killed.
func (f *framed) giveBack(err error) {
	f.callOver()
	f.pool.Release(f.w)
	f.w, f.err = nil, err
}

// Close gives the command back; one whose response was not read to its end is killed first,
// since its framing is in an unknown state.
func (f *framed) Close() error {
	if f.w != nil {
		f.w.Kill()
		f.giveBack(errors.New("result abandoned"))
	}
	return nil
}
