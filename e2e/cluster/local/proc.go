package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// component is one process of the cluster.
type component struct {
	// Name is unique in the cluster and names the PID and log files, e.g. "kubelet-mlkube-node-1".
	Name string
	// Netns is the node namespace the process runs in; empty for the host's.
	Netns string
	Bin   string
	Args  []string
}

// argv is the command line that starts c. A node's processes enter its network namespace with
// nsenter --net, not `ip netns exec`: the latter remounts /sys, hiding the cgroup mounts kubelet
// needs ("failed to find cgroup mounts").
func (c component) argv() []string {
	argv := append([]string{c.Bin}, c.Args...)
	if c.Netns == "" {
		return argv
	}
	return append([]string{"nsenter", "--net=" + netnsPath(c.Netns), "--"}, argv...)
}

// start runs c in its own session, logging to logs/<name>.log, and records its PID with the binary
// it runs, so that a later `down` in another process can stop exactly it.
func start(l layout, c component) error {
	logf, err := os.OpenFile(filepath.Join(l.logDir(), c.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	argv := c.argv()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// The cluster outlives the command that started it, and a ^C meant for that command must not
	// reach the cluster's processes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", c.Name, err)
	}
	// Reap it if it ends while we still run, so a stopped process does not linger as a zombie.
	go func() { _ = cmd.Wait(); logf.Close() }()
	rec := pidRecord{Name: c.Name, PID: cmd.Process.Pid, Bin: c.Bin}
	return os.WriteFile(filepath.Join(l.pidDir(), c.Name), []byte(rec.String()), 0o644)
}

// pidRecord is the content of a PID file: "<pid> <binary>".
type pidRecord struct {
	Name string
	PID  int
	Bin  string
}

func (r pidRecord) String() string { return fmt.Sprintf("%d %s\n", r.PID, r.Bin) }

func parsePIDRecord(name, s string) (pidRecord, error) {
	pid, bin, ok := strings.Cut(strings.TrimSpace(s), " ")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 1 || bin == "" {
		return pidRecord{}, fmt.Errorf("PID file %s: %q is not \"<pid> <binary>\"", name, s)
	}
	return pidRecord{Name: name, PID: n, Bin: bin}, nil
}

// readPIDRecords reads every PID file, sorted by name.
func readPIDRecords(l layout) ([]pidRecord, error) {
	entries, err := os.ReadDir(l.pidDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []pidRecord
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(l.pidDir(), e.Name()))
		if err != nil {
			return nil, err
		}
		r, err := parsePIDRecord(e.Name(), string(b))
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Name < recs[j].Name })
	return recs, nil
}

// alive reports whether pid still runs bin. A PID that has ended, became a zombie, or now belongs
// to another program is not ours to signal.
func alive(pid int, bin string) bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	// A binary replaced on disk since it started shows as "<path> (deleted)".
	return strings.TrimSuffix(exe, " (deleted)") == bin && !zombie(pid)
}

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name, which may itself hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}

// stopProcs sends SIGTERM to every proc that is alive, waits up to grace for them to end, then
// kills the rest and waits for them too.
func stopProcs(ctx context.Context, procs []pidRecord, grace time.Duration) error {
	signalAll := func(sig syscall.Signal) {
		for _, p := range procs {
			if alive(p.PID, p.Bin) {
				_ = syscall.Kill(p.PID, sig)
			}
		}
	}
	allGone := func() (bool, error) {
		for _, p := range procs {
			if alive(p.PID, p.Bin) {
				return false, nil
			}
		}
		return true, nil
	}
	signalAll(syscall.SIGTERM)
	if poll(ctx, grace, allGone) == nil {
		return nil
	}
	signalAll(syscall.SIGKILL)
	return pollErr(ctx, 10*time.Second, "processes to end after SIGKILL", allGone)
}
