package proc

import (
	"context"
	"os/exec"
	"testing"
)

// TestAWorkerWhoseContextEndsAsItsCallDoesIsNotReused: a context that ends just as a call does
// starts the worker's kill in a goroutine of its own. The worker must count as dead as soon as the
// call is over, not once that goroutine runs, or it goes back to the pool and is killed under the
// next object ("python worker died while transforming: signal: killed"). A call whose context
// did not end leaves it alive.
func TestAWorkerWhoseContextEndsAsItsCallDoesIsNotReused(t *testing.T) {
	for _, ended := range []bool{false, true} {
		w, err := StartWorker("sleeper", exec.Command("sleep", "60"), nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		callOver := w.KillIfDone(ctx)
		if ended {
			cancel()
		}
		callOver()
		if w.Dead() != ended {
			t.Errorf("context ended %v: the worker is dead %v right after the call; want %v", ended, w.Dead(), ended)
		}
		cancel()
		w.Kill()
		<-w.exited
	}
}
