package main

import (
	"os"
	"syscall"
	"testing"
	"time"
)

func TestWaitForStop(t *testing.T) {
	for name, tc := range map[string]struct {
		sigs         []os.Signal
		wantChildren int
	}{
		"SIGTERM":                {sigs: []os.Signal{syscall.SIGTERM}},
		"SIGINT":                 {sigs: []os.Signal{syscall.SIGINT}},
		"children, then SIGTERM": {sigs: []os.Signal{syscall.SIGCHLD, syscall.SIGCHLD, syscall.SIGTERM}, wantChildren: 2},
	} {
		t.Run(name, func(t *testing.T) {
			sigs := make(chan os.Signal, len(tc.sigs))
			for _, s := range tc.sigs {
				sigs <- s
			}
			children := 0
			waitForStop(sigs, func() { children++ })
			if children != tc.wantChildren {
				t.Errorf("onChild called %d times, want %d", children, tc.wantChildren)
			}
			if len(sigs) != 0 {
				t.Errorf("%d signals left unread", len(sigs))
			}
		})
	}
}

// TestReapCollectsExitedChildren: a child that exited must be gone from the process table after
// reap, not left as a zombie.
func TestReapCollectsExitedChildren(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		reap()
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("child %d not reaped", pid)
}
