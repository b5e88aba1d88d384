package ioshim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"

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
// each started by Start or by the first object that needs it, and again, in the background, when
// it dies; stderr, if not nil, receives the commands' stderr besides their error messages, and
// log their restarts.
func NewPersistent(command []string, concurrency int, stderr io.Writer, log *slog.Logger) (*Persistent, error) {
	if err := checkCommand(command, concurrency); err != nil {
		return nil, err
	}
	name := "io command " + command[0]
	return &Persistent{workers: proc.NewPool(concurrency, func(context.Context) (*proc.Worker, error) {
		return proc.StartWorker(name, exec.Command(command[0], command[1:]...), stderr)
	}, log)}, nil
}

// Start starts every command now, so that what a command loads at its start (a model, a
// dictionary) is not paid for by the first objects, within their timeout.
func (p *Persistent) Start(ctx context.Context) error {
	return p.workers.Fill(ctx)
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
	if err := f.send(w, in, object, args); err != nil {
		f.giveBack(err) // nothing reached the command: it stays
		return nil, err
	}
	return f, nil
}

// smallObject is the most of an object Transform reads before it hands the object to the
// command: an object that fits is framed whole and written at once, without a goroutine, when
// the pipe takes it in one write.
const smallObject = 60 << 10

var smallBufs = sync.Pool{New: func() any {
	b := make([]byte, smallObject+1)
	return &b
}}

// send starts sending the request; the writer's verdict comes on f.wrote. An error is one of
// reading the object before any of it was sent.
func (f *framed) send(w *proc.Worker, in io.Reader, object, args string) error {
	bp := smallBufs.Get().(*[]byte)
	n, err := io.ReadFull(in, *bp)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		req, err := ioframe.AppendRequest(make([]byte, 0, 16+len(object)+len(args)+n), object, args, (*bp)[:n])
		smallBufs.Put(bp)
		if err != nil {
			return err
		}
		if sent := writeOnce(w.In, req); sent < len(req) {
			go f.write(w, func() error { _, err := w.In.Write(req[sent:]); return err })
		} else {
			f.wrote <- nil
		}
	case err != nil:
		smallBufs.Put(bp)
		return fmt.Errorf("read the object: %w", err)
	default:
		rest := io.MultiReader(bytes.NewReader(*bp), in)
		go f.write(w, func() error {
			defer smallBufs.Put(bp)
			return ioframe.WriteRequest(w.In, object, args, rest)
		})
	}
	return nil
}

// writeOnce writes as much of b to the pipe as one non-blocking write takes, so that Transform
// never waits on a command.
func writeOnce(pipe *os.File, b []byte) int {
	rc, err := pipe.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Write(func(fd uintptr) bool {
		if m, err := syscall.Write(int(fd), b); err == nil {
			n = m
		}
		return true // one attempt: the rest is the writer goroutine's
	})
	return n
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

// write runs the writing of the request, or of its rest, and gives its verdict. A failure leaves
// the framing unusable, so it kills the command, after saying why: the reader, which then sees
// the command's stdout end, reports that reason.
func (f *framed) write(w *proc.Worker, send func() error) {
	err := send()
	if err != nil {
		// Killed before the verdict is told, so that end never gives back a command whose
		// request is half written.
		w.Kill()
	}
	f.wrote <- err
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
			switch {
			case werr != nil:
				err = fmt.Errorf("write the object to %s: %w", f.w.Name, werr)
			case answered:
				err = errors.New(oe.Message)
			}
			if f.w.Out.Buffered() > 0 {
				// It wrote past its answer: what follows would pass for the next object's.
				f.w.Kill()
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
