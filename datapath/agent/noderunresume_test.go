package agent

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/noderun"
)

// restart closes the env's agent, as a crash would stop it, and serves a
// new one on the same data root.
func (e *env) restart() {
	e.t.Helper()
	e.agent.Close()
	srv := httptest.NewUnstartedServer(nil)
	opts := e.agent.opts
	opts.AdvertiseURL = "http://" + srv.Listener.Addr().String()
	a, err := New(opts)
	if err != nil {
		e.t.Fatal(err)
	}
	srv.Config.Handler = a
	srv.Start()
	e.t.Cleanup(func() {
		a.Close()
		srv.Close()
	})
	e.agent, e.url = a, srv.URL
}

// fileStamp is what a rewrite of a file changes.
type fileStamp struct {
	ino   uint64
	mtime time.Time
}

func (e *env) stamps(names []string) map[string]fileStamp {
	out := map[string]fileStamp{}
	for _, n := range names {
		if fi, err := os.Stat(filepath.Join(e.root, n)); err == nil {
			out[n] = fileStamp{ino: fi.Sys().(*syscall.Stat_t).Ino, mtime: fi.ModTime()}
		}
	}
	return out
}

// checkResults checks that every object's result is complete and that no
// temporary file is left.
func (e *env) checkResults(names []string) {
	e.t.Helper()
	for _, name := range names {
		if got, ok := e.readObject(resultOf(name)); !ok || got != "object "+name+"|done" {
			e.t.Errorf("%s = %q, want the object's result", resultOf(name), got)
		}
	}
	if left := e.leftovers(); len(left) > 0 {
		e.t.Errorf("temporary files left: %v", left)
	}
}

// TestNodeRunResumesAfterCrash: the agent stops while its run holds its 50th
// object; a new agent on the same data root, asked to PUT the run again,
// resumes from the journal: what was done is skipped and not rewritten,
// the rest is done, and nothing temporary is left.
func TestNodeRunResumesAfterCrash(t *testing.T) {
	const n = 120
	e := newEnv(t)
	g := newGate(func(n int64, _ string) bool { return n == 50 })
	e.addTransform("t", etlv1alpha1.CommHPush, "", g.transform)
	names := e.dataset(n)
	if a, _ := e.putRun("r1", prefixRun("t", 4)); a.status != http.StatusOK {
		t.Fatalf("PUT: %d %s", a.status, a.body)
	}
	<-g.entered
	run := e.agent.runs.Get(noderun.Key{Namespace: "default", Name: "r1"})
	// A crash leaves temporary files: one of this run's, beside a result.
	e.writeObject("out/sub/."+"000."+testUID+runTempSuffix, []byte("half"))
	e.restart()
	before := run.Status()
	if before.Phase != etlv1alpha1.RunSuspended || before.DoneObjects < 49-4 || before.DoneObjects >= n {
		t.Fatalf("the first attempt: %s with %d done", before.Phase, before.DoneObjects)
	}
	var done []string
	var total, doneBytes int64
	for _, name := range names {
		size := int64(len("object " + name))
		total += size
		if e.exists(resultOf(name)) {
			done = append(done, resultOf(name))
			doneBytes += size
		}
	}
	if int64(len(done)) != before.DoneObjects {
		t.Fatalf("%d results in place, %d objects done", len(done), before.DoneObjects)
	}
	stamps := e.stamps(done)
	close(g.release)
	s := e.runToEnd("r1", prefixRun("t", 4))
	wantCounts(t, s, etlv1alpha1.RunSucceeded, etlv1alpha1.RunCounts{
		PlannedObjects: n, PlannedBytes: total,
		DoneObjects: n - before.DoneObjects, DoneBytes: total - doneBytes, SkippedObjects: before.DoneObjects,
	})
	e.checkResults(names)
	for name, st := range e.stamps(done) {
		if st != stamps[name] {
			t.Errorf("%s was rewritten on resume", name)
		}
	}
}

// TestNodeRunRedoesUnjournaledResult: a result renamed into place just
// before a crash, with its intent in the journal and no done record, is
// redone and replaced without overwrite, not refused as someone else's.
func TestNodeRunRedoesUnjournaledResult(t *testing.T) {
	e := newEnv(t)
	g := newGate(func(int64, string) bool { return false })
	e.addTransform("t", etlv1alpha1.CommHPush, "", g.transform)
	names := e.dataset(3)
	e.writeObject(resultOf(names[1]), []byte("object "+names[1]+"|done"))
	e.writeObject(resultOf(names[2]), []byte("the last rename before a crash"))
	// In noderun's journal file, its records.
	journal := fmt.Sprintf("d %q\ni %q\ni %q\n", names[0], names[1], names[2])
	e.writeObject(wire.JournalDir("out", testUID)+"/journal", []byte(journal+`d "cut by the cra`))
	e.writeObject(resultOf(names[0]), []byte("object "+names[0]+"|done"))
	s := e.runToEnd("r1", prefixRun("t", 1))
	if s.Phase != etlv1alpha1.RunSucceeded || s.SkippedObjects != 1 || s.DoneObjects != 2 {
		t.Errorf("status %+v, want 1 skipped and 2 redone", s)
	}
	e.checkResults(names)
}

func TestNodeRunSuspendResume(t *testing.T) {
	const n = 30
	e := newEnv(t)
	g := newGate(func(n int64, _ string) bool { return n == 10 })
	e.addTransform("t", etlv1alpha1.CommHPush, "", g.transform)
	names := e.dataset(n)
	if a, _ := e.putRun("r1", prefixRun("t", 2)); a.status != http.StatusOK {
		t.Fatalf("PUT: %d %s", a.status, a.body)
	}
	held := <-g.entered
	a := e.do(http.MethodDelete, e.runURL("r1", testUID), nil)
	if s := a.runStatus(t); a.status != http.StatusOK || s.Phase != etlv1alpha1.RunRunning || !strings.Contains(s.Message, "stopping") {
		t.Errorf("DELETE: %d %s, want Running and stopping", a.status, a.body)
	}
	// The worker finishes the object it holds.
	close(g.release)
	s := e.waitRun("r1")
	if s.Phase != etlv1alpha1.RunSuspended || s.FailedObjects != 0 || !e.exists(resultOf(held)) {
		t.Fatalf("suspended: %+v; the held object %s must be done", s, held)
	}
	first := s.DoneObjects
	if first >= n {
		t.Fatalf("all %d objects done despite the suspension", first)
	}
	s = e.runToEnd("r1", prefixRun("t", 2))
	if s.Phase != etlv1alpha1.RunSucceeded || s.SkippedObjects != first || s.DoneObjects != n-first {
		t.Errorf("resumed: %+v, want %d skipped and %d done", s, first, n-first)
	}
	if got := len(g.transformed()); got != n {
		t.Errorf("the transformer saw %d objects, want each of %d once", got, n)
	}
	e.checkResults(names)
	// The run's share ended: a PUT again answers it.
	if a, again := e.putRun("r1", prefixRun("t", 2)); a.status != http.StatusOK || again.Finished == nil || *again.Finished != *s.Finished {
		t.Errorf("PUT of an ended run: %d %s", a.status, a.body)
	}
}

// TestNodeRunOneWriterPerDestination: while a run writes a destination, a
// run of another UID into it, by its name or through a symlink, is refused
// with 409 naming the first.
func TestNodeRunOneWriterPerDestination(t *testing.T) {
	e := newEnv(t)
	g := newGate(func(int64, string) bool { return true })
	e.addTransform("t", etlv1alpha1.CommHPush, "", g.transform)
	e.dataset(2)
	if a, _ := e.putRun("r1", prefixRun("t", 1)); a.status != http.StatusOK {
		t.Fatalf("PUT: %d %s", a.status, a.body)
	}
	<-g.entered
	os.Symlink("out", filepath.Join(e.root, "alias"))
	second := prefixRun("t", 1)
	second.UID = "second"
	for _, dst := range []string{"out", "alias", "out/"} {
		second.Destination.Prefix = dst
		a, _ := e.putRun("r2", second)
		if a.status != http.StatusConflict || !strings.Contains(a.apiError(t).Error, "being written by run "+testUID) {
			t.Errorf("a second run into %s: %d %s, want 409 naming %s", dst, a.status, a.body, testUID)
		}
	}
	// The same run under another UID (recreated) waits for the first.
	if a, _ := e.putRun("r1", second); a.status != http.StatusConflict || !strings.Contains(a.apiError(t).Error, "DELETE it") {
		t.Errorf("r1 with another uid: %d %s, want 409", a.status, a.body)
	}
	close(g.release)
	e.waitRun("r1")
	second.Destination.Prefix = "alias"
	second.Overwrite = true
	if s := e.runToEnd("r2", second); s.Phase != etlv1alpha1.RunSucceeded {
		t.Errorf("a second run once the first ended: %+v", s)
	}
}

// TestNodeRunOverlap: a destination that is the source, inside it or
// containing it once symlinks are resolved is refused.
func TestNodeRunOverlap(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	e.writeObject("data/raw/x", []byte("x"))
	os.Symlink("data/raw", filepath.Join(e.root, "link"))
	os.Symlink("data", filepath.Join(e.root, "top"))
	os.Symlink("raw", filepath.Join(e.root, "data", "back"))
	for name, dirs := range map[string][2]string{
		"destination is the source by a symlink": {"data/raw", "link"},
		"destination inside the source":          {"data/raw", "link/new/out"},
		"source inside the destination":          {"data/raw", "top"},
		"source by a symlink inside":             {"link", "data"},
		"by names":                               {"data/raw", "data/raw/out"},
		"a symlink inside the destination's dir": {"data/raw", "data/back/out"},
	} {
		t.Run(name, func(t *testing.T) {
			spec := prefixRun("t", 1)
			spec.Source.Prefix, spec.Destination.Prefix = dirs[0], dirs[1]
			a, _ := e.putRun("r1", spec)
			if a.status != http.StatusBadRequest || !strings.Contains(a.apiError(t).Error, "overlaps source.prefix") {
				t.Errorf("%s into %s: %d %s, want 400 overlaps", dirs[0], dirs[1], a.status, a.body)
			}
		})
	}
	spec := prefixRun("t", 1)
	spec.Source.Prefix, spec.Destination.Prefix = "link", "data/out"
	if s := e.runToEnd("r1", spec); s.Phase != etlv1alpha1.RunSucceeded || !e.exists("data/out/x") {
		t.Errorf("a sibling of the source: %+v", s)
	}
}
