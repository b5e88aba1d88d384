// Package podcgroup finds the cgroup v1 directories of pods whose nodes run on the test's own
// host (the local provider, and kind's node containers), and reads what the kernel accounts to
// them: the e2e suite reads the system pods' peak memory, the store benchmark the CPU each part
// of a run spends. On a host of cgroup v2, or with the nodes elsewhere, nothing is found and the
// callers say so instead of a figure.
package podcgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The hierarchies of the controllers the tests read.
const (
	Memory  = "/sys/fs/cgroup/memory"
	CPUAcct = "/sys/fs/cgroup/cpuacct"
)

// maxDepth bounds the walk: a pod's directory is at most this deep under the hierarchy's root
// (kubepods/burstable/pod…, or the systemd driver's slices, under a node's own parent).
const maxDepth = 6

// ErrNone is the error of Find when no pod's directory is under the hierarchy.
var ErrNone = errors.New("no pod's cgroup found (cgroup v2, or the nodes run elsewhere)")

// Find returns the directory of each pod of pods that has one under the hierarchy root, by UID.
func Find(root string, pods []corev1.Pod) (map[types.UID]string, error) {
	want := map[string]types.UID{} // directory name suffix → pod
	for _, p := range pods {
		want["pod"+string(p.UID)] = p.UID
		// The systemd cgroup driver's name: kubepods-burstable-pod<uid with _>.slice.
		want["pod"+strings.ReplaceAll(string(p.UID), "-", "_")+".slice"] = p.UID
	}
	dirs := map[types.UID]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil //nolint:nilerr // an unreadable corner of the hierarchy is skipped
		}
		if strings.Count(strings.TrimPrefix(p, root), "/") > maxDepth {
			return filepath.SkipDir
		}
		for suffix, uid := range want {
			if strings.HasSuffix(d.Name(), suffix) {
				dirs[uid] = p
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err == nil && len(dirs) == 0 && len(pods) > 0 {
		err = ErrNone
	}
	return dirs, err
}

// CPU is the CPU time the tasks of the cgroup at dir (of the cpuacct hierarchy) have spent since
// it was made, in user and kernel mode.
func CPU(dir string) (time.Duration, error) {
	n, err := readInt(filepath.Join(dir, "cpuacct.usage"))
	return time.Duration(n), err
}

// PeakMemory is the peak memory of the cgroup at dir (of the memory hierarchy) in bytes, since
// it was made or ResetPeakMemory.
func PeakMemory(dir string) (int64, error) {
	return readInt(filepath.Join(dir, "memory.max_usage_in_bytes"))
}

// ResetPeakMemory starts the peak of the cgroup at dir from now (root only).
func ResetPeakMemory(dir string) error {
	return os.WriteFile(filepath.Join(dir, "memory.max_usage_in_bytes"), []byte("0"), 0)
}

func readInt(file string) (int64, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}
