package proc

import (
	"context"
	"os/exec"
	"testing"
)

// TestPoolReplacesAWorkerThatDiedIdle: a worker that died while idle in the pool (a command that
// crashed or exited between objects) is not handed out; a new one is started for the object.
func TestPoolReplacesAWorkerThatDiedIdle(t *testing.T) {
	p := NewPool(1, func(context.Context) (*Worker, error) {
		return StartWorker("sleeper", exec.Command("cat"), nil) // exits when Close ends its stdin
	}, nil)
	t.Cleanup(func() { p.Close(context.Background()) })
	first, err := p.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p.Release(first)
	if err := KillGroup(first.Cmd.Process); err != nil {
		t.Fatal(err)
	}
	<-first.exited // the pool can know it is dead from here on
	next, err := p.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release(next)
	if next == first || next.Dead() {
		t.Errorf("Acquire gave the worker that died idle (same %v, dead %v); want a new, live one", next == first, next.Dead())
	}
}
