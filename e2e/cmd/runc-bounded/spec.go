package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// capNames are Linux's capabilities in number order (capability.h); a name not here is left in
// place, as a newer runc may know it.
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE",
	"CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE", "CAP_SYS_PACCT",
	"CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE", "CAP_SYS_TIME",
	"CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL",
	"CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF", "CAP_CHECKPOINT_RESTORE",
}

// capSets are the sets of an OCI process's capabilities.
var capSets = []string{"bounding", "effective", "inheritable", "permitted", "ambient"}

// specFile is the file runc will read the process from: --process for exec, the bundle's
// config.json for create and run (the bundle defaults to the working directory).
func specFile(args []string) (string, bool) {
	cmd, bundle, process := "", ".", ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, value, hasValue := strings.Cut(a, "=")
		next := func() string {
			if hasValue {
				return value
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case flag == "--bundle" || flag == "-b":
			bundle = next()
		case flag == "--process" || flag == "-p":
			process = next()
		case cmd == "" && !strings.HasPrefix(a, "-"):
			cmd = a
		case cmd == "" && takesValue(flag) && !hasValue:
			i++ // a global flag's value is not the command
		}
	}
	switch cmd {
	case "create", "run":
		return filepath.Join(bundle, "config.json"), true
	case "exec":
		return process, process != ""
	}
	return "", false
}

// takesValue reports whether a runc global flag is followed by a value.
func takesValue(flag string) bool {
	return slices.Contains([]string{"--root", "--log", "--log-format", "--criu", "--rootless"}, flag)
}

// boundSpec drops from a runtime spec (a config.json or an exec process) every capability outside
// bounding, keeping every other field as it was.
func boundSpec(in []byte, bounding uint64) ([]byte, bool, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(in, &doc); err != nil {
		return nil, false, err
	}
	// config.json nests the process; an exec process file is the process itself.
	process := doc
	var inner map[string]json.RawMessage
	if raw, ok := doc["process"]; ok {
		if err := json.Unmarshal(raw, &inner); err != nil {
			return nil, false, fmt.Errorf("process: %w", err)
		}
		process = inner
	}
	raw, ok := process["capabilities"]
	if !ok {
		return in, false, nil
	}
	var caps map[string]json.RawMessage
	if err := json.Unmarshal(raw, &caps); err != nil {
		return nil, false, fmt.Errorf("capabilities: %w", err)
	}
	changed := false
	for _, set := range capSets {
		var names []string
		if caps[set] == nil {
			continue
		}
		if err := json.Unmarshal(caps[set], &names); err != nil {
			return nil, false, fmt.Errorf("capabilities.%s: %w", set, err)
		}
		kept := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !allowed(n, bounding) })
		if len(kept) == len(names) {
			continue
		}
		changed = true
		if caps[set], ok = marshal(kept); !ok {
			return nil, false, fmt.Errorf("capabilities.%s", set)
		}
	}
	if !changed {
		return in, false, nil
	}
	process["capabilities"], _ = marshal(caps)
	if inner != nil {
		doc["process"], _ = marshal(inner)
	}
	out, err := json.Marshal(doc)
	return out, true, err
}

func marshal(v any) (json.RawMessage, bool) {
	b, err := json.Marshal(v)
	return b, err == nil
}

// allowed reports whether the capability name is in the bounding set (true for names not known).
func allowed(name string, bounding uint64) bool {
	n := slices.Index(capNames, name)
	return n < 0 || bounding>>n&1 == 1
}

// readBounding reads CapBnd from a /proc/<pid>/status file.
func readBounding(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapBnd:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("%s: no CapBnd line", path)
}
