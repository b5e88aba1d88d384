package podcgroup

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func pod(uid string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
}

// TestFindNamesBothDriversAndStopsAtItsDepth: a pod's directory is found under the cgroupfs
// driver's name and the systemd driver's, but not deeper than a pod's directory can be; a
// hierarchy without any of the pods is ErrNone.
func TestFindNamesBothDriversAndStopsAtItsDepth(t *testing.T) {
	root := t.TempDir()
	mk := func(rel, usage string) string {
		dir := filepath.Join(root, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cpuacct.usage"), []byte(usage), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	fs := mk("node-a/kubepods/burstable/pod1111-aa", "1500000000\n")
	sd := mk("node-b/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod2222_bb.slice", "7")
	mk("a/b/c/d/e/f/g/pod3333-cc", "1")
	dirs, err := Find(root, []corev1.Pod{pod("1111-aa"), pod("2222-bb"), pod("3333-cc")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[types.UID]string{"1111-aa": fs, "2222-bb": sd}
	if len(dirs) != len(want) || dirs["1111-aa"] != fs || dirs["2222-bb"] != sd {
		t.Fatalf("found %v; want %v (the pod seven levels down is deeper than pods are)", dirs, want)
	}
	if cpu, err := CPU(fs); err != nil || cpu != 1500*time.Millisecond {
		t.Errorf("CPU of %s: %v, %v; want 1.5s", fs, cpu, err)
	}
	if _, err := CPU(filepath.Join(root, "node-a")); err == nil {
		t.Error("CPU of a directory without cpuacct.usage: no error")
	}
	if _, err := Find(root, []corev1.Pod{pod("4444")}); !errors.Is(err, ErrNone) {
		t.Errorf("Find of a pod without a directory: %v; want ErrNone", err)
	}
}
