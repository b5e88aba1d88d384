package python

import (
	"context"
	"os/exec"
	"testing"

	"github.com/mlkube/mlkube/runtimes/proc"
)

// TestAWorkerWhoseContextEndsAsItsCallDoesIsNotReused: a context that ends just as a call does
// starts the worker's kill in a goroutine of its own. The worker must count as dead as soon as the
// call is over, not once that goroutine runs, or it goes back to the pool and is killed under the
// next object ("python worker died while transforming: signal: killed"). A call whose context
// did not end leaves it alive.
func TestAWorkerWhoseContextEndsAsItsCallDoesIsNotReused(t *testing.T) {
	for _, ended := range []bool{false, true} {
		w := &worker{exited: make(chan struct{}), cmd: exec.Command("sleep", "60")}
		proc.OwnGroup(w.cmd)
		if err := w.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { w.err = w.cmd.Wait(); close(w.exited) }()
		ctx, cancel := context.WithCancel(context.Background())
		callOver := w.killIfDone(ctx)
		if ended {
			cancel()
		}
		callOver()
		if w.dead() != ended {
			t.Errorf("context ended %v: the worker is dead %v right after the call; want %v", ended, w.dead(), ended)
		}
		cancel()
		w.kill()
		<-w.exited
	}
}
