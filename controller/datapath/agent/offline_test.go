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
	"strings"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// startOffline posts req for the pipeline name and returns the answer.
func (e *env) startOffline(name string, req any) (answer, wire.RunStatus) {
	e.t.Helper()
	body, _ := json.Marshal(req)
	a := e.do(http.MethodPost, e.url+wire.RunsPath+"default/"+name, strings.NewReader(string(body)))
	var s wire.RunStatus
	if a.status == http.StatusAccepted {
		if err := json.Unmarshal(a.body, &s); err != nil {
			e.t.Fatalf("202 with %q: %v", a.body, err)
		}
	}
	return a, s
}

// runOffline starts a run that must be accepted and returns its Status
// once it has ended.
func (e *env) runOffline(name string, req wire.RunRequest) wire.RunStatus {
	e.t.Helper()
	a, s := e.startOffline(name, req)
	if a.status != http.StatusAccepted {
		e.t.Fatalf("POST offline: %d %s", a.status, a.body)
	}
	<-e.agent.offline.get(s.ID).done
	return e.offlineStatus(s.ID)
}

func (e *env) offlineStatus(id string) wire.RunStatus {
	e.t.Helper()
	a := e.do(http.MethodGet, e.url+wire.RunsPath+id, nil)
	var s wire.RunStatus
	if a.status != http.StatusOK || json.Unmarshal(a.body, &s) != nil {
		e.t.Fatalf("GET offline %s: %d %s", id, a.status, a.body)
	}
	return s
}

// leftovers lists the temporary files under the data root.
func (e *env) leftovers() []string {
	var tmp []string
	filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
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

// dataset writes n objects under raw/, some in a subdirectory.
func (e *env) dataset(n int) []string {
	var names []string
	for i := range n {
		name := fmt.Sprintf("raw/%02d", i)
		if i%3 == 0 {
			name = fmt.Sprintf("raw/sub/%02d", i)
		}
		e.writeObject(name, []byte("object "+name))
		names = append(names, name)
	}
	return names
}

func TestOfflineRun(t *testing.T) {
	for _, comm := range comms {
		t.Run(string(comm), func(t *testing.T) {
			e := newEnv(t)
			e.addTransform("t", comm, "", tag("t"))
			names := e.dataset(20)
			s := e.runOffline("t", wire.RunRequest{Src: "raw/", Dst: "out", Args: "a1", Workers: 3})
			if s.State != wire.RunSucceeded || s.Total != 20 || s.Counters.Objects != 20 || s.Counters.Errors != 0 {
				t.Fatalf("status %+v, want Succeeded with 20 objects", s)
			}
			if s.Node != testNode || s.Transform != "default/t" || s.Finished == nil {
				t.Errorf("status names node %q transform %q finished %v", s.Node, s.Transform, s.Finished)
			}
			for _, name := range names {
				dst := "out/" + strings.TrimPrefix(name, "raw/")
				got, ok := e.readObject(dst)
				if want := "object " + name + "|t:a1"; !ok || got != want {
					t.Errorf("%s = %q, want %q", dst, got, want)
				}
			}
			if s.Counters.BytesOut <= s.Counters.BytesIn {
				t.Errorf("bytes in %d out %d: the tag adds bytes", s.Counters.BytesIn, s.Counters.BytesOut)
			}
			if left := e.leftovers(); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
			// The objects count in the Transform's stats as inline ones do.
			if got := e.agent.Stats().Transforms["default/t"].Counters.Objects; got != 20 {
				t.Errorf("agent stats count %d objects, want 20", got)
			}
		})
	}
}

func TestOfflinePipeline(t *testing.T) {
	e := newEnv(t)
	e.addTransform("a", etlv1alpha1.CommWS, "", tag("a"))
	e.addTransform("b", etlv1alpha1.CommHPush, "", tag("b"))
	e.writeObject("in/x", []byte("x"))
	if s := e.runOffline("a>>b", wire.RunRequest{Src: "in", Dst: "out"}); s.State != wire.RunSucceeded {
		t.Fatalf("status %+v", s)
	}
	if got, _ := e.readObject("out/x"); got != "x|a:|b:" {
		t.Errorf("out/x = %q, want x|a:|b:", got)
	}
}

func TestOfflineDryRun(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", tag("t"))
	e.dataset(4)
	s := e.runOffline("t", wire.RunRequest{Src: "raw", Dst: "out", DryRun: true})
	var want []wire.RunItem
	for _, o := range []string{"raw/01", "raw/02", "raw/sub/00", "raw/sub/03"} {
		want = append(want, wire.RunItem{Object: o, Dst: "out/" + strings.TrimPrefix(o, "raw/")})
	}
	if s.State != wire.RunSucceeded || s.Total != 4 || fmt.Sprint(s.Planned) != fmt.Sprint(want) {
		t.Errorf("dry run %+v, want Succeeded planning %v", s, want)
	}
	if s.Counters.Objects != 0 {
		t.Errorf("a dry run transformed %d objects", s.Counters.Objects)
	}
	if _, err := os.Stat(filepath.Join(e.root, "out")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dry run created the destination: %v", err)
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

func TestOfflineErrors(t *testing.T) {
	setup := func(t *testing.T) *env {
		e := newEnv(t)
		e.addTransform("t", etlv1alpha1.CommHPush, "", failBad)
		for _, name := range []string{"a", "b-bad", "c", "d-late", "e"} {
			e.writeObject("in/"+name, []byte(name))
		}
		return e
	}
	t.Run("stop at the first failure", func(t *testing.T) {
		e := setup(t)
		s := e.runOffline("t", wire.RunRequest{Src: "in", Dst: "out", Workers: 1})
		if s.State != wire.RunFailed || !strings.Contains(s.Message, `stopped after object "in/b-bad" failed: cannot transform in/b-bad`) {
			t.Fatalf("status %s %q, want Failed naming in/b-bad", s.State, s.Message)
		}
		if _, ok := e.readObject("out/a"); !ok {
			t.Error("out/a, before the failure, was not written")
		}
		if s.Counters.Objects >= s.Total {
			t.Errorf("%d of %d objects attempted after a stop", s.Counters.Objects, s.Total)
		}
		if len(s.Errors) != 1 || s.Errors[0].Object != "in/b-bad" || s.Errors[0].StatusCode != http.StatusBadGateway {
			t.Errorf("errors %+v, want in/b-bad with 502", s.Errors)
		}
	})
	t.Run("continue on error", func(t *testing.T) {
		e := setup(t)
		s := e.runOffline("t", wire.RunRequest{Src: "in", Dst: "out", Workers: 2, ContinueOnError: true})
		if s.State != wire.RunFailed || s.Counters.Objects != 5 || s.Counters.Errors != 2 {
			t.Fatalf("status %s, %d objects, %d errors; want Failed, 5, 2", s.State, s.Counters.Objects, s.Counters.Errors)
		}
		for _, name := range []string{"a", "c", "e"} {
			if got, _ := e.readObject("out/" + name); got != name {
				t.Errorf("out/%s = %q", name, got)
			}
		}
		// No partial object under its final name, nothing temporary left.
		for _, name := range []string{"b-bad", "d-late"} {
			if _, ok := e.readObject("out/" + name); ok {
				t.Errorf("out/%s exists after its object failed", name)
			}
		}
		if left := e.leftovers(); len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	})
}

func TestOfflineAbort(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", hang)
	e.dataset(3)
	a, s := e.startOffline("t", wire.RunRequest{Src: "raw", Dst: "out"})
	if a.status != http.StatusAccepted || s.State != wire.RunRunning {
		t.Fatalf("POST: %d %s", a.status, a.body)
	}
	if d := e.do(http.MethodDelete, e.url+wire.RunsPath+s.ID, nil); d.status != http.StatusOK {
		t.Fatalf("DELETE: %d %s", d.status, d.body)
	}
	<-e.agent.offline.get(s.ID).done
	if s = e.offlineStatus(s.ID); s.State != wire.RunAborted {
		t.Errorf("after DELETE: %s %q, want Aborted", s.State, s.Message)
	}
	if left := e.leftovers(); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	var all []wire.RunStatus
	json.Unmarshal(e.do(http.MethodGet, e.url+wire.RunsPath, nil).body, &all)
	if len(all) != 1 || all[0].ID != s.ID {
		t.Errorf("GET %s lists %+v", wire.RunsPath, all)
	}
}

func TestOfflineRefusals(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	e.writeObject("raw/x", []byte("x"))
	e.writeObject("file", []byte("x"))
	cases := map[string]struct {
		name string
		req  any
		want int
		msg  string
	}{
		"unknown field":     {"t", map[string]any{"src": "raw", "dst": "out", "wrkers": 2}, 400, `unknown field "wrkers"`},
		"escaping src":      {"t", wire.RunRequest{Src: "../etc", Dst: "out"}, 400, `src: object "../etc" contains ..`},
		"overlap":           {"t", wire.RunRequest{Src: "raw", Dst: "raw/out"}, 400, "overlaps"},
		"workers":           {"t", wire.RunRequest{Src: "raw", Dst: "out", Workers: 1000}, 400, "workers 1000"},
		"unknown transform": {"nope", wire.RunRequest{Src: "raw", Dst: "out"}, 404, "transform default/nope not found"},
		"missing src":       {"t", wire.RunRequest{Src: "gone", Dst: "out"}, 404, `src: "gone" not found in the namespace's data`},
		"src is a file":     {"t", wire.RunRequest{Src: "file", Dst: "out"}, 400, `"file" is not a directory`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, _ := e.startOffline(tc.name, tc.req)
			if a.status != tc.want || !strings.Contains(a.apiError(t).Error, tc.msg) {
				t.Errorf("answer %d %s, want %d with %q", a.status, a.body, tc.want, tc.msg)
			}
		})
	}
	if a := e.do(http.MethodGet, e.url+wire.RunsPath+"nope", nil); a.status != 404 || !strings.Contains(a.apiError(t).Error, `offline run "nope" not found`) {
		t.Errorf("GET of an unknown run: %d %s", a.status, a.body)
	}
	if a := e.do(http.MethodGet, e.url+wire.RunsPath+"default/t", nil); a.status != 405 {
		t.Errorf("GET of the start path: %d %s", a.status, a.body)
	}
}

// TestOfflineSkipsSymlinks: a link under src, even to a file inside the
// data root, is not an object of the run; one that leads out is never read.
func TestOfflineSkipsSymlinks(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	e.writeObject("raw/real", []byte("real"))
	outside := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outside, []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(e.root, "raw", "escape"))
	os.Symlink(filepath.Dir(outside), filepath.Join(e.root, "raw", "dir"))
	s := e.runOffline("t", wire.RunRequest{Src: "raw", Dst: "out"})
	if s.State != wire.RunSucceeded || s.Total != 1 {
		t.Errorf("status %s with %d objects, want Succeeded with raw/real only", s.State, s.Total)
	}
	if _, ok := e.readObject("out/escape"); ok {
		t.Error("a symlink out of the data root was transformed")
	}
}

func TestDestinationAndtempName(t *testing.T) {
	if got := destination("a/raw", "out", "a/raw/x/y.jpg"); got != "out/x/y.jpg" {
		t.Errorf("destination = %q, want out/x/y.jpg", got)
	}
	if got := tempName("out/x/y.jpg", "r1"); got != "out/x/.y.jpg.r1.tmp" {
		t.Errorf("tempName = %q, want out/x/.y.jpg.r1.tmp", got)
	}
	if got := tempName("y", "r1"); got != ".y.r1.tmp" {
		t.Errorf("tempName of a top-level name = %q", got)
	}
}
