package local

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParsePIDRecord(t *testing.T) {
	for in, want := range map[string]*pidRecord{
		"123 /usr/bin/etcd\n": {Name: "etcd", PID: 123, Bin: "/usr/bin/etcd"},
		"123":                 nil,
		"1 /sbin/init":        nil, // never signal init
		"x /usr/bin/etcd":     nil,
		"":                    nil,
	} {
		got, err := parsePIDRecord("etcd", in)
		if want == nil {
			if err == nil {
				t.Errorf("parse %q = %+v, want an error", in, got)
			}
			continue
		}
		if err != nil || got != *want {
			t.Errorf("parse %q = %+v, %v; want %+v", in, got, err, *want)
		}
	}
}

// TestStartAndStop runs a real process the way the cluster does, reads its PID file back and
// stops it by PID.
func TestStartAndStop(t *testing.T) {
	l := layout{State: t.TempDir()}
	if err := ensureDir(l.pidDir(), l.logDir()); err != nil {
		t.Fatal(err)
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	sleep, _ = filepath.EvalSymlinks(sleep)
	if err := start(l, component{Name: "sleeper", Bin: sleep, Args: []string{"600"}}); err != nil {
		t.Fatal(err)
	}
	recs, err := readPIDRecords(l)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records = %+v, %v", recs, err)
	}
	if !alive(recs[0].PID, sleep) {
		t.Fatalf("%+v not alive", recs[0])
	}
	if alive(recs[0].PID, "/some/other/binary") {
		t.Error("a PID running another binary counts as ours")
	}
	if err := stopProcs(context.Background(), recs, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if alive(recs[0].PID, sleep) {
		t.Error("still alive after stopProcs")
	}
	if _, err := os.Stat(filepath.Join(l.logDir(), "sleeper.log")); err != nil {
		t.Errorf("no log file: %v", err)
	}
}

func TestPick(t *testing.T) {
	recs := []pidRecord{{Name: "etcd"}, {Name: "kubelet-n1"}, {Name: "kube-proxy-host"}, {Name: "kubelet-n2"}}
	got := pick(recs, "kubelet-", "etcd")
	want := []pidRecord{{Name: "etcd"}, {Name: "kubelet-n1"}, {Name: "kubelet-n2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pick (-want +got):\n%s", diff)
	}
}
