// Command pause is the local cluster's pod sandbox process (containerd's sandbox_image): it holds
// the pod's namespaces open and does nothing else until it is told to stop. As PID 1 of a pod that
// shares its PID namespace it also reaps orphaned children, as the upstream pause does.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	onChild := func() {}
	if os.Getpid() == 1 {
		onChild = reap
	}
	waitForStop(sigs, onChild)
}

// waitForStop returns on SIGTERM or SIGINT and calls onChild for every SIGCHLD.
func waitForStop(sigs <-chan os.Signal, onChild func()) {
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			return
		}
		onChild()
	}
}

// reap collects every exited child, so none stays a zombie.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
