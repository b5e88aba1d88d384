package agent

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// double answers each object twice over: a run's results outgrow its
// source.
func double(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) {
	data, err := io.ReadAll(in)
	if err != nil {
		return nil, err
	}
	return bytes.NewReader(append(data, data...)), nil
}

// visibleBytes is the bytes of the namespace's objects: its files but the
// hidden ones (journals, locks, temporary files), as the quota counts them.
func (e *env) visibleBytes() int64 {
	e.t.Helper()
	var n int64
	err := filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case strings.HasPrefix(d.Name(), ".") && d.IsDir():
			return fs.SkipDir
		case strings.HasPrefix(d.Name(), ".") || d.IsDir():
			return nil
		}
		fi, err := d.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// TestNodeRunResultsWithinQuota: a run's results are held to the
// namespace's quota on the node as PUTs are. Three objects of 100 bytes,
// results of 200 each, a quota of 600: the first result fits, the other
// two are refused with 507 naming the namespace and the quota, the error
// manifest (which would pass it too) is not written, the namespace holds
// no more than its quota, no temporary file is left, and the agent counts
// exactly what is on disk.
func TestNodeRunResultsWithinQuota(t *testing.T) {
	const quota = 600
	e := newEnv(t, func(o *Options) { o.NamespaceQuota = quota })
	e.addTransform("t", etlv1alpha1.CommHPush, "", double)
	for _, name := range []string{"raw/a", "raw/b", "raw/c"} {
		e.writeObject(name, bytes.Repeat([]byte(name[len(name)-1:]), 100))
	}
	spec := prefixRun("t", 1)
	spec.ContinueOnError = true
	s := e.runToEnd("r1", spec)
	wantCounts(t, s, etlv1alpha1.RunFailed, etlv1alpha1.RunCounts{PlannedObjects: 3, PlannedBytes: 300, DoneObjects: 1, DoneBytes: 100, FailedObjects: 2})
	for _, oe := range s.Errors {
		if oe.StatusCode != http.StatusInsufficientStorage || !strings.Contains(oe.Message, "namespace default") || !strings.Contains(oe.Message, "--namespace-quota") {
			t.Errorf("%s failed with %d %q, want 507 naming namespace default and --namespace-quota", oe.Object, oe.StatusCode, oe.Message)
		}
	}
	if !strings.Contains(s.Message, "error manifest") || !strings.Contains(s.Message, "--namespace-quota") {
		t.Errorf("run message %q, want the error manifest refused by the quota", s.Message)
	}
	if got, _ := e.readObject("out/a"); got != strings.Repeat("a", 200) {
		t.Errorf("out/a holds %q, want the first result", got)
	}
	for _, name := range []string{"out/b", "out/c", "out/" + wire.ErrorManifest(testUID)} {
		if e.exists(name) {
			t.Errorf("%s exists past the quota", name)
		}
	}
	if left := e.leftovers(); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	held := e.visibleBytes()
	if held > quota {
		t.Errorf("the namespace holds %d bytes, over its quota of %d", held, quota)
	}
	wantLedger(t, &e.agent.objects.bounds, "default", held, 0)
}

// TestNodeRunErrorManifestCounted: an error manifest that fits the quota
// is written and counted, so that the namespace's next writes find its
// bytes.
func TestNodeRunErrorManifestCounted(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.NamespaceQuota = 1 << 20 })
	e.addTransform("t", etlv1alpha1.CommHPush, "", failBad)
	e.writeObject("raw/a", []byte("a"))
	e.writeObject("raw/b-bad", []byte("b"))
	spec := prefixRun("t", 1)
	spec.ContinueOnError = true
	s := e.runToEnd("r1", spec)
	wantCounts(t, s, etlv1alpha1.RunFailed, etlv1alpha1.RunCounts{PlannedObjects: 2, PlannedBytes: 2, DoneObjects: 1, DoneBytes: 1, FailedObjects: 1})
	if !e.exists("out/" + wire.ErrorManifest(testUID)) {
		t.Fatalf("no error manifest: %q", s.Message)
	}
	wantLedger(t, &e.agent.objects.bounds, "default", e.visibleBytes(), 0)
}
