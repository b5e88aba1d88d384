package integration

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on every architecture
// Go's linux ports run on but alpha.
const userHZ = 100

// procCPU is the CPU time (user and system) process pid has used so far, from /proc/<pid>/stat.
func procCPU(pid int) (time.Duration, error) {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	d, err := statCPU(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// parseStat splits a /proc/<pid>/stat line into the command name and the fields after it, the
// process state first. The name, in parentheses, may hold spaces and parentheses itself; the
// fields after the last ")" are fixed.
func parseStat(stat []byte) (name string, fields []string, err error) {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "", nil, fmt.Errorf("no command name")
	}
	return string(stat[open+1 : end]), strings.Fields(string(stat[end+1:])), nil
}

// statCPU is the user and system time of a /proc/<pid>/stat line.
func statCPU(stat []byte) (time.Duration, error) {
	_, fields, err := parseStat(stat)
	if err != nil {
		return 0, err
	}
	if len(fields) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(fields))
	}
	var ticks int64
	for _, f := range fields[11:13] { // utime and stime: fields 14 and 15 of proc_pid_stat(5)
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// selfCPU is the CPU time this process (the manager and the test's clients) has used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err) // RUSAGE_SELF with a valid pointer cannot fail
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childPID is the one child process of this one whose command is name (envtest's kube-apiserver).
func childPID(b *testing.B, name string) int {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		b.Fatal(err)
	}
	self := os.Getpid()
	found := 0
	for _, s := range stats {
		raw, err := os.ReadFile(s)
		if err != nil {
			continue // the process ended since the glob
		}
		command, fields, err := parseStat(raw)
		if err != nil || command != name || len(fields) < 2 || fields[1] != strconv.Itoa(self) {
			continue
		}
		if found != 0 {
			b.Fatalf("two child processes named %s: %d and %s", name, found, filepath.Base(filepath.Dir(s)))
		}
		found, _ = strconv.Atoi(filepath.Base(filepath.Dir(s)))
	}
	if found == 0 {
		b.Fatalf("no child process named %s", name)
	}
	return found
}

func TestStatCPU(t *testing.T) {
	// A command name with a space and a ")" in it, utime 250 and stime 50 ticks.
	line := []byte("4242 (kube apiserver) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 123 0\n")
	if d, err := statCPU(line); err != nil || d != 3*time.Second {
		t.Errorf("statCPU = %v, %v; want 3s (300 ticks at %d Hz)", d, err, userHZ)
	}
	for _, bad := range []string{
		"4242 kube-apiserver S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0", // no parentheses
		"4242 (x) S 1 2 3", // too few fields
		"4242 (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 2x0 50 0",
	} {
		if _, err := statCPU([]byte(bad)); err == nil {
			t.Errorf("statCPU(%q) gave no error", bad)
		}
	}
	// Some CPU first, so that /proc's 10 ms ticks have counted some: hashing until getrusage
	// says 50 ms went by.
	sum := sha256.New()
	for selfCPU() < 50*time.Millisecond {
		sum.Write(make([]byte, 1<<16))
	}
	before := selfCPU()
	own, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	after := selfCPU()
	// /proc cuts user and system time each to whole ticks: up to two ticks below getrusage.
	if tick := time.Second / userHZ; own < before-2*tick || own > after+tick {
		t.Errorf("this process's /proc CPU time %v; getrusage says %v to %v", own, before, after)
	}
}
