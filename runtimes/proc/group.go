package proc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// KillGroupOnCancel makes cmd, once started, lead its own process group and
// makes the cancellation of its context (exec.CommandContext) kill that whole
// group with SIGKILL, not the leader alone: a shell's children, or anything
// else the command forked, would otherwise keep running and keep its output
// pipes open.
func KillGroupOnCancel(cmd *exec.Cmd) {
	OwnGroup(cmd)
	cmd.Cancel = func() error { return KillGroup(cmd.Process) }
}

// OwnGroup makes cmd, once started, lead its own process group, which
// KillGroup kills.
func OwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// KillGroup kills the process group that p leads, as OwnGroup set up. A group already gone is not an error.
func KillGroup(p *os.Process) error {
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
