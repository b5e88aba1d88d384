package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/noderun"
)

// testUID is the TransformRun UID of the tests' runs.
const testUID = "3f2a7c1e-0b1d-4c5e-9a8f-0123456789ab"

// prefixRun is a node run of every object under raw into out through the
// pipeline, with workers.
func prefixRun(pipeline string, workers int) wire.NodeRunSpec {
	return wire.NodeRunSpec{
		UID: testUID, Pipeline: pipeline, Workers: workers,
		Source:      etlv1alpha1.RunSource{Prefix: "raw"},
		Destination: etlv1alpha1.RunDestination{Prefix: "out"},
	}
}

func (e *env) runURL(name, uid string) string {
	u := e.url + wire.NodeRunsPath + "default/" + name
	if uid != "" {
		u += "?uid=" + uid
	}
	return u
}

// putRun PUTs spec as the run name of namespace default.
func (e *env) putRun(name string, spec any) (answer, wire.NodeRunStatus) {
	e.t.Helper()
	body, err := json.Marshal(spec)
	if err != nil {
		e.t.Fatal(err)
	}
	a := e.do(http.MethodPut, e.runURL(name, ""), strings.NewReader(string(body)))
	return a, a.runStatus(e.t)
}

// runStatus decodes a NodeRunStatus answer; a zero one for another status.
func (a answer) runStatus(t testing.TB) wire.NodeRunStatus {
	t.Helper()
	var s wire.NodeRunStatus
	if a.status == http.StatusOK {
		if err := json.Unmarshal(a.body, &s); err != nil {
			t.Fatalf("200 with %q: %v", a.body, err)
		}
	}
	return s
}

// waitRun waits until the current attempt of run name has ended and
// returns its status as GET answers it.
func (e *env) waitRun(name string) wire.NodeRunStatus {
	e.t.Helper()
	<-e.agent.runs.Get(noderun.Key{Namespace: "default", Name: name}).Done()
	a := e.do(http.MethodGet, e.runURL(name, ""), nil)
	if a.status != http.StatusOK {
		e.t.Fatalf("GET run %s: %d %s", name, a.status, a.body)
	}
	return a.runStatus(e.t)
}

// waitStatus GETs run name's status until cond holds of it, and returns it.
func waitStatus(t testing.TB, e *env, name string, cond func(wire.NodeRunStatus) bool) wire.NodeRunStatus {
	t.Helper()
	for {
		if s := e.do(http.MethodGet, e.runURL(name, ""), nil).runStatus(t); cond(s) {
			return s
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runToEnd PUTs spec, which must be accepted, and returns the status the
// run ends with.
func (e *env) runToEnd(name string, spec wire.NodeRunSpec) wire.NodeRunStatus {
	e.t.Helper()
	if a, _ := e.putRun(name, spec); a.status != http.StatusOK {
		e.t.Fatalf("PUT run %s: %d %s", name, a.status, a.body)
	}
	return e.waitRun(name)
}

// runTempSuffix ends the temporary names of package noderun's results.
const runTempSuffix = ".tmp"

// leftovers lists the temporary files under the namespace's data.
func (e *env) leftovers() []string {
	var tmp []string
	filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, runTempSuffix) {
			tmp = append(tmp, p)
		}
		return nil
	})
	return tmp
}

func (e *env) readObject(name string) (string, bool) {
	data, err := os.ReadFile(filepath.Join(e.root, name))
	return string(data), err == nil
}

func (e *env) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(e.root, name))
	return err == nil
}

// dataset writes n objects under raw/, some in a subdirectory, and returns
// their names.
func (e *env) dataset(n int) []string {
	var names []string
	for i := range n {
		name := fmt.Sprintf("raw/%03d", i)
		if i%3 == 0 {
			name = fmt.Sprintf("raw/sub/%03d", i)
		}
		e.writeObject(name, []byte("object "+name))
		names = append(names, name)
	}
	return names
}

// resultOf is where a prefixRun writes the result of object.
func resultOf(object string) string { return "out/" + strings.TrimPrefix(object, "raw/") }

// wantCounts checks a status's phase and counts.
func wantCounts(t *testing.T, s wire.NodeRunStatus, phase etlv1alpha1.RunPhase, want etlv1alpha1.RunCounts) {
	t.Helper()
	if s.Phase != phase {
		t.Errorf("phase %s (%q), want %s", s.Phase, s.Message, phase)
	}
	if diff := cmp.Diff(want, s.RunCounts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
}

func TestNodeRun(t *testing.T) {
	for _, comm := range comms {
		t.Run(string(comm), func(t *testing.T) {
			e := newEnv(t)
			e.addTransform("t", comm, "", tag("t"))
			names := e.dataset(20)
			spec := prefixRun("t", 3)
			spec.Args = "a1"
			s := e.runToEnd("r1", spec)
			var bytes int64
			for _, name := range names {
				bytes += int64(len("object " + name))
				got, ok := e.readObject(resultOf(name))
				if want := "object " + name + "|t:a1"; !ok || got != want {
					t.Errorf("%s = %q, want %q", resultOf(name), got, want)
				}
			}
			wantCounts(t, s, etlv1alpha1.RunSucceeded, etlv1alpha1.RunCounts{
				PlannedObjects: 20, PlannedBytes: bytes, DoneObjects: 20, DoneBytes: bytes,
			})
			if s.UID != testUID || s.Node != testNode || s.Finished == nil || len(s.Errors) != 0 {
				t.Errorf("status %+v", s)
			}
			if left := e.leftovers(); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
			if e.exists("out/" + wire.ErrorManifest(testUID)) {
				t.Error("an error manifest for a run without failures")
			}
			// The objects count in the Transform's stats as inline ones do.
			if got := e.agent.Stats().Transforms["default/t"].Counters.Objects; got != 20 {
				t.Errorf("agent stats count %d objects, want 20", got)
			}
		})
	}
}

func TestNodeRunPipeline(t *testing.T) {
	e := newEnv(t)
	e.addTransform("a", etlv1alpha1.CommWS, "", tag("a"))
	e.addTransform("b", etlv1alpha1.CommHPush, "", tag("b"))
	e.writeObject("raw/x", []byte("x"))
	if s := e.runToEnd("r1", prefixRun("a>>b", 1)); s.Phase != etlv1alpha1.RunSucceeded {
		t.Fatalf("status %+v", s)
	}
	if got, _ := e.readObject("out/x"); got != "x|a:|b:" {
		t.Errorf("out/x = %q, want x|a:|b:", got)
	}
}

// TestNodeRunSources: objects and template sources name objects of the
// namespace's data, those this node does not have are not its share; an
// extension picks objects and is changed in the results' names.
func TestNodeRunSources(t *testing.T) {
	cases := map[string]struct {
		src         etlv1alpha1.RunSource
		toExtension string
		want        map[string]string // result → content
	}{
		"objects": {
			src:  etlv1alpha1.RunSource{Objects: []string{"raw/a.flac", "raw/sub/c.flac", "elsewhere/missing"}},
			want: map[string]string{"out/raw/a.flac": "a|t:", "out/raw/sub/c.flac": "c|t:"},
		},
		"template": {
			src:  etlv1alpha1.RunSource{Template: "shard-{01..03}.tar"},
			want: map[string]string{"out/shard-01.tar": "s1|t:", "out/shard-02.tar": "s2|t:"},
		},
		"prefix with an extension change": {
			src: etlv1alpha1.RunSource{Prefix: "raw", Extension: ".flac"}, toExtension: ".wav",
			want: map[string]string{"out/a.wav": "a|t:", "out/sub/c.wav": "c|t:"},
		},
		"template with an extension change": {
			src: etlv1alpha1.RunSource{Template: "raw/{a,b}.flac", Extension: ".flac"}, toExtension: ".wav",
			want: map[string]string{"out/raw/a.wav": "a|t:"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.addTransform("t", etlv1alpha1.CommHPush, "", tag("t"))
			for object, data := range map[string]string{
				"raw/a.flac": "a", "raw/b.txt": "b", "raw/sub/c.flac": "c", "shard-01.tar": "s1", "shard-02.tar": "s2",
			} {
				e.writeObject(object, []byte(data))
			}
			spec := prefixRun("t", 2)
			spec.Source, spec.Destination.ToExtension = tc.src, tc.toExtension
			s := e.runToEnd("r1", spec)
			n := int64(len(tc.want))
			if s.Phase != etlv1alpha1.RunSucceeded || s.PlannedObjects != n || s.DoneObjects != n {
				t.Errorf("status %s %q planned %d done %d, want Succeeded with %d", s.Phase, s.Message, s.PlannedObjects, s.DoneObjects, n)
			}
			got := map[string]string{}
			filepath.WalkDir(filepath.Join(e.root, "out"), func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() && !strings.Contains(p, "/.") {
					data, _ := os.ReadFile(p)
					rel, _ := filepath.Rel(e.root, p)
					got[rel] = string(data)
				}
				return nil
			})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeRunDryRun(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", tag("t"))
	e.dataset(4)
	spec := prefixRun("t", 2)
	spec.DryRun = true
	s := e.runToEnd("r1", spec)
	wantCounts(t, s, etlv1alpha1.RunSucceeded, etlv1alpha1.RunCounts{PlannedObjects: 4, PlannedBytes: 2*14 + 2*18})
	if e.exists("out") {
		t.Error("a dry run created the destination")
	}
}

// TestNodeRunNothingOnTheNode: a node without the source, or without data
// of the namespace, succeeds at once with zero counts.
func TestNodeRunNothingOnTheNode(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	wantCounts(t, e.runToEnd("r1", prefixRun("t", 1)), etlv1alpha1.RunSucceeded, etlv1alpha1.RunCounts{})
	os.Remove(e.root)
	e.resolver.targets["team-b/t"] = e.resolver.targets["default/t"]
	a := e.do(http.MethodPut, e.url+wire.NodeRunsPath+"team-b/r1", strings.NewReader(`{"uid":"u1","pipeline":"t","source":{"prefix":"raw"},"destination":{"prefix":"out"},"workers":1}`))
	<-e.agent.runs.Get(noderun.Key{Namespace: "team-b", Name: "r1"}).Done()
	if s := a.runStatus(t); a.status != http.StatusOK || s.PlannedObjects != 0 {
		t.Errorf("a namespace without data: %d %s", a.status, a.body)
	}
	if _, err := os.Stat(filepath.Join(e.base, "team-b")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the run created the namespace's directory: %v", err)
	}
}

// failBad fails the objects whose name contains "bad", after sending part
// of the result when the name contains "late".
func failBad(_ context.Context, in io.Reader, object, _ string) (io.Reader, error) {
	data, _ := io.ReadAll(in)
	switch {
	case strings.Contains(object, "late"):
		return io.MultiReader(strings.NewReader(strings.Repeat("partial ", 20000)), errReader{}), nil
	case strings.Contains(object, "bad"):
		return nil, errors.New("cannot transform " + object)
	}
	return strings.NewReader(string(data)), nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("broke mid-result") }

// metaZero replaces the times of errors, which tests do not know.
var metaZero metav1.Time

// readManifest returns the error manifest of the run in out, Time cleared.
func (e *env) readManifest() []etlv1alpha1.ObjectError {
	e.t.Helper()
	data, ok := e.readObject("out/" + wire.ErrorManifest(testUID))
	if !ok {
		e.t.Fatal("no error manifest")
	}
	var errs []etlv1alpha1.ObjectError
	for line := range strings.SplitSeq(strings.TrimSuffix(data, "\n"), "\n") {
		var oe etlv1alpha1.ObjectError
		if err := json.Unmarshal([]byte(line), &oe); err != nil {
			e.t.Fatalf("manifest line %q: %v", line, err)
		}
		oe.Time = metaZero
		errs = append(errs, oe)
	}
	return errs
}

func TestNodeRunErrors(t *testing.T) {
	setup := func(t *testing.T) *env {
		e := newEnv(t)
		e.addTransform("t", etlv1alpha1.CommHPush, "", failBad)
		for _, name := range []string{"a", "b-bad", "c", "d-late", "e", "f-bad"} {
			e.writeObject("raw/"+name, []byte(name))
		}
		return e
	}
	objectErr := func(object, msg string) etlv1alpha1.ObjectError {
		return etlv1alpha1.ObjectError{Object: object, Message: msg, StatusCode: http.StatusBadGateway, Node: testNode}
	}
	t.Run("continue on error", func(t *testing.T) {
		e := setup(t)
		spec := prefixRun("t", 1)
		spec.ContinueOnError = true
		s := e.runToEnd("r1", spec)
		wantCounts(t, s, etlv1alpha1.RunFailed, etlv1alpha1.RunCounts{PlannedObjects: 6, PlannedBytes: 19, DoneObjects: 3, DoneBytes: 3, FailedObjects: 3})
		want := []etlv1alpha1.ObjectError{
			objectErr("raw/b-bad", "cannot transform raw/b-bad"),
			// hpush: the transformer broke its answer off.
			objectErr("raw/d-late", "unexpected EOF"),
			objectErr("raw/f-bad", "cannot transform raw/f-bad"),
		}
		if diff := cmp.Diff(want, e.readManifest()); diff != "" {
			t.Errorf("error manifest (-want +got):\n%s", diff)
		}
		for i := range s.Errors {
			s.Errors[i].Time = metaZero
		}
		if diff := cmp.Diff(want, s.Errors); diff != "" {
			t.Errorf("status errors (-want +got):\n%s", diff)
		}
		for _, name := range []string{"b-bad", "d-late", "f-bad"} {
			if e.exists("out/" + name) {
				t.Errorf("out/%s exists after its object failed", name)
			}
		}
		if left := e.leftovers(); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	})
	t.Run("stop at the first failure", func(t *testing.T) {
		e := setup(t)
		s := e.runToEnd("r1", prefixRun("t", 1))
		if s.Phase != etlv1alpha1.RunFailed || !strings.HasPrefix(s.Message, `stopped after object "raw/b-bad" failed: cannot transform raw/b-bad`) {
			t.Fatalf("status %s %q, want Failed naming raw/b-bad", s.Phase, s.Message)
		}
		if s.DoneObjects != 1 || s.FailedObjects != 1 || !e.exists("out/a") || e.exists("out/c") {
			t.Errorf("done %d failed %d: want a done, b-bad failed, nothing after", s.DoneObjects, s.FailedObjects)
		}
		if diff := cmp.Diff([]etlv1alpha1.ObjectError{objectErr("raw/b-bad", "cannot transform raw/b-bad")}, e.readManifest()); diff != "" {
			t.Errorf("error manifest (-want +got):\n%s", diff)
		}
	})
}

// TestNodeRunCheck: a check transforms every object to the end of its
// result and writes none: an existing result is no conflict, and the
// failures (one of them late in its result) are listed as a run lists them.
func TestNodeRunCheck(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", failBad)
	for _, name := range []string{"a", "b-bad", "c", "d-late"} {
		e.writeObject("raw/"+name, []byte(name))
	}
	e.writeObject("out/a", []byte("someone else's"))
	spec := prefixRun("t", 2)
	spec.Check, spec.ContinueOnError = true, true
	s := e.runToEnd("r1", spec)
	wantCounts(t, s, etlv1alpha1.RunFailed, etlv1alpha1.RunCounts{PlannedObjects: 4, PlannedBytes: 13, DoneObjects: 2, DoneBytes: 2, FailedObjects: 2})
	var failed []string
	for _, oe := range e.readManifest() {
		failed = append(failed, oe.Object+": "+oe.Message)
	}
	slices.Sort(failed)
	if diff := cmp.Diff([]string{"raw/b-bad: cannot transform raw/b-bad", "raw/d-late: unexpected EOF"}, failed); diff != "" {
		t.Errorf("error manifest (-want +got):\n%s", diff)
	}
	entries, err := os.ReadDir(filepath.Join(e.root, "out"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range entries {
		if !strings.HasPrefix(d.Name(), ".") {
			names = append(names, d.Name())
		}
	}
	if diff := cmp.Diff([]string{"a", wire.ErrorManifest(testUID)}, names); diff != "" {
		t.Errorf("the destination after a check (-want +got):\n%s", diff)
	}
	if got, _ := e.readObject("out/a"); got != "someone else's" {
		t.Errorf("out/a = %q: a check replaced it", got)
	}
}

func TestNodeRunOverwrite(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", tag("t"))
	e.writeObject("raw/x", []byte("x"))
	e.writeObject("raw/y", []byte("y"))
	e.writeObject("out/x", []byte("someone else's"))
	spec := prefixRun("t", 1)
	spec.ContinueOnError = true
	s := e.runToEnd("r1", spec)
	if s.Phase != etlv1alpha1.RunFailed || s.FailedObjects != 1 || s.DoneObjects != 1 || len(s.Errors) != 1 {
		t.Fatalf("status %+v, want Failed with raw/x refused", s)
	}
	if oe := s.Errors[0]; oe.Object != "raw/x" || oe.StatusCode != http.StatusConflict || !strings.Contains(oe.Message, `destination object "out/x" exists; set overwrite`) {
		t.Errorf("error %+v, want 409 naming out/x", oe)
	}
	if got, _ := e.readObject("out/x"); got != "someone else's" {
		t.Errorf("out/x = %q: replaced without overwrite", got)
	}
	spec.UID, spec.Overwrite = "other-uid", true
	if s := e.runToEnd("r1", spec); s.Phase != etlv1alpha1.RunSucceeded || s.DoneObjects != 2 {
		t.Fatalf("with overwrite: %+v", s)
	}
	if got, _ := e.readObject("out/x"); got != "x|t:" {
		t.Errorf("with overwrite, out/x = %q", got)
	}
}

// gate is a transformer that holds the objects for which hold says so
// until release is closed, and tells entered about each as it holds it.
type gate struct {
	hold    func(n int64, object string) bool
	entered chan string
	release chan struct{}
	mu      sync.Mutex
	n       int64
	seen    []string
}

func newGate(hold func(n int64, object string) bool) *gate {
	return &gate{hold: hold, entered: make(chan string, 64), release: make(chan struct{})}
}

func (g *gate) transform(ctx context.Context, in io.Reader, object, _ string) (io.Reader, error) {
	data, err := io.ReadAll(in)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.n++
	n := g.n
	g.seen = append(g.seen, object)
	g.mu.Unlock()
	if g.hold(n, object) {
		g.entered <- object
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return strings.NewReader(string(data) + "|done"), nil
}

func (g *gate) transformed() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.seen)
}

// TestNodeRunWalkFeedsWorkers: the walk of the source runs ahead of the
// workers by at most the queue's lookahead instead of listing the whole
// directory first; a share that fits in it is listed at once, which the
// status says (Listed) while its first object is still transformed, and
// Planned is every object once the run ends.
func TestNodeRunWalkFeedsWorkers(t *testing.T) {
	for _, tc := range []struct {
		name       string
		objects    int
		wantListed bool
	}{
		{"fits the lookahead", 100, true},
		{"past the lookahead", noderun.Lookahead + 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			g := newGate(func(n int64, _ string) bool { return n == 1 })
			e.addTransform("t", etlv1alpha1.CommHPush, "", g.transform)
			for i := range tc.objects {
				e.writeObject(fmt.Sprintf("raw/%04d", i), []byte("x"))
			}
			if a, _ := e.putRun("r1", prefixRun("t", 1)); a.status != http.StatusOK {
				t.Fatalf("PUT: %d %s", a.status, a.body)
			}
			<-g.entered
			// The worker holds one object, the queue up to the lookahead,
			// the walk waits with one more: however far it got, it is
			// blocked there, or done.
			wantPlanned := int64(min(tc.objects, noderun.Lookahead+2))
			s := waitStatus(t, e, "r1", func(s wire.NodeRunStatus) bool { return s.Listed || s.PlannedObjects >= wantPlanned })
			if s.Phase != etlv1alpha1.RunRunning || s.Listed != tc.wantListed || s.PlannedObjects > wantPlanned {
				t.Errorf("while the first object is transformed: %s, listed %v with %d planned; want listed %v, at most %d planned",
					s.Phase, s.Listed, s.PlannedObjects, tc.wantListed, wantPlanned)
			}
			close(g.release)
			n := int64(tc.objects)
			wantCounts(t, e.waitRun("r1"), etlv1alpha1.RunSucceeded, etlv1alpha1.RunCounts{PlannedObjects: n, PlannedBytes: n, DoneObjects: n, DoneBytes: n})
		})
	}
}

// TestNodeRunSkipsSymlinksAndHidden: a link under the source, even to a file
// inside the data root, is not an object of the run, nor is a hidden name.
func TestNodeRunSkipsSymlinksAndHidden(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	e.writeObject("raw/real", []byte("real"))
	e.writeObject("raw/.hidden", []byte("h"))
	e.writeObject("raw/.dir/x", []byte("h"))
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(e.root, "raw", "escape"))
	os.Symlink(filepath.Dir(outside), filepath.Join(e.root, "raw", "dir"))
	s := e.runToEnd("r1", prefixRun("t", 1))
	if s.Phase != etlv1alpha1.RunSucceeded || s.PlannedObjects != 1 || !e.exists("out/real") {
		t.Errorf("status %s with %d objects, want Succeeded with raw/real only", s.Phase, s.PlannedObjects)
	}
}
