package proc

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Pool holds a fixed number of worker slots. A slot holds an idle worker, or nothing when its
// worker is to be started by the next object; a slot is taken while its object runs or its
// worker restarts. Dead workers are replaced in the background, so that the next object finds a
// worker ready rather than waiting for one to start.
type Pool struct {
	start func(context.Context) (*Worker, error)
	log   *slog.Logger
	idle  chan *Worker
}

// NewPool makes a pool of size slots whose workers start calls start, all empty: each slot's
// worker starts with its first object, or with Fill.
func NewPool(size int, start func(context.Context) (*Worker, error), log *slog.Logger) *Pool {
	if log == nil {
		log = slog.Default()
	}
	p := &Pool{start: start, log: log, idle: make(chan *Worker, size)}
	for range size {
		p.idle <- nil
	}
	return p
}

// Fill starts the worker of every empty slot now; the first error stops it, and the slots
// started so far keep their workers.
func (p *Pool) Fill(ctx context.Context) error {
	for range cap(p.idle) {
		w := <-p.idle
		if w == nil {
			var err error
			if w, err = p.start(ctx); err != nil {
				p.idle <- nil
				return err
			}
		}
		p.idle <- w
	}
	return nil
}

// Acquire takes an idle worker, starting one for an empty slot.
func (p *Pool) Acquire(ctx context.Context) (*Worker, error) {
	var w *Worker
	select {
	case w = <-p.idle:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if w != nil && !w.Dead() {
		return w, nil
	}
	if w != nil {
		// It died while idle: a command that crashed or exited between objects.
		p.reap(w)
	}
	w, err := p.start(ctx)
	if err != nil {
		p.idle <- nil
		return nil, err
	}
	return w, nil
}

// Release gives a worker back; a dead one is reaped and replaced in the background.
func (p *Pool) Release(w *Worker) {
	if !w.Dead() {
		p.idle <- w
		return
	}
	go func() { p.idle <- p.replace(w) }()
}

// replace reaps a dead worker and starts another; nil when that fails, and the next object
// tries again.
func (p *Pool) replace(dead *Worker) *Worker {
	p.reap(dead)
	w, err := p.start(context.Background())
	if err != nil {
		p.log.Error(fmt.Sprintf("%s restart failed; the next object tries again", dead.Name), "error", err)
		return nil
	}
	return w
}

// reap waits for a dead worker, a second at most, and logs its restart.
func (p *Pool) reap(dead *Worker) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	dead.Stop(ctx)
	cancel()
	p.log.Info(fmt.Sprintf("restarting %s, which died", dead.Name))
}

// Close stops every worker, waiting up to ctx for the busy ones to come back.
func (p *Pool) Close(ctx context.Context) error {
	for range cap(p.idle) {
		select {
		case w := <-p.idle:
			if w != nil {
				w.Stop(ctx)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// StopIdle stops the workers that are idle now, leaving their slots empty.
func (p *Pool) StopIdle(ctx context.Context) {
	for range len(p.idle) {
		if w := <-p.idle; w != nil {
			w.Stop(ctx)
		}
		p.idle <- nil
	}
}
