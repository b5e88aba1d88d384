package local

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// cgroupV1Roots are the mount points of the host's cgroup v1 hierarchies (cpu, memory, ...,
// name=systemd). The host has cgroups v1 only; kubelet needs a node's cgroupRoot in every one.
func cgroupV1Roots() ([]string, error) {
	mounts, err := readMounts()
	if err != nil {
		return nil, err
	}
	var roots []string
	for _, m := range mounts {
		if m.FSType == "cgroup" {
			roots = append(roots, m.Point)
		}
	}
	if len(roots) == 0 {
		return nil, errors.New("no cgroup v1 hierarchy mounted")
	}
	return roots, nil
}

// createNodeCgroups makes /<node> in every hierarchy. A new cpuset cgroup starts with no CPUs and
// no memory nodes, and refuses tasks until its parent's are copied in.
func createNodeCgroups(roots []string, node string) error {
	for _, root := range roots {
		dir := filepath.Join(root, node)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			b, err := os.ReadFile(filepath.Join(root, f))
			if errors.Is(err, fs.ErrNotExist) {
				continue // not the cpuset hierarchy
			}
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), bytes.TrimSpace(b), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// cgroupTree lists dir and every cgroup below it, deepest first (the order rmdir needs).
func cgroupTree(dir string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return fs.SkipAll
		}
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	})
	sort.SliceStable(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	return dirs, err
}

// cgroupPIDs lists the processes in dir's tree: the node's pods.
func cgroupPIDs(dir string) ([]int, error) {
	dirs, err := cgroupTree(dir)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, "cgroup.procs"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while we walked
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if pid, err := strconv.Atoi(sc.Text()); err == nil {
				pids = append(pids, pid)
			}
		}
		f.Close()
	}
	return pids, nil
}

// removeCgroupTree removes dir and every cgroup below it; they must hold no process.
func removeCgroupTree(dir string) error {
	dirs, err := cgroupTree(dir)
	if err != nil {
		return err
	}
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
