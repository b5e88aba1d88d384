package local

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// hostSysctls are the host-wide settings a cluster changes: IP forwarding (for routing between
// nodes), and the kernel tunables kubelet sets when it starts. Up saves them and teardown puts them
// back, so the machine is left as it was found.
var hostSysctls = []string{
	"net/ipv4/ip_forward",
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

// saveSysctls records the current values in path, unless a saved copy is already there (a cluster
// whose teardown never ran: its copy holds the values from before it).
func saveSysctls(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	saved := map[string]string{}
	for _, k := range hostSysctls {
		b, err := os.ReadFile(filepath.Join("/proc/sys", k))
		if err != nil {
			continue // not on this kernel
		}
		saved[k] = string(bytes.TrimSpace(b))
	}
	b, err := json.Marshal(saved)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// restoreSysctls writes the saved values back and forgets them.
func restoreSysctls(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	saved := map[string]string{}
	if err := json.Unmarshal(b, &saved); err != nil {
		return err
	}
	for k, v := range saved {
		if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
			return err
		}
	}
	return os.Remove(path)
}
