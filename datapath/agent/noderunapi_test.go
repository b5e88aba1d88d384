package agent

import (
	"net/http"
	"strings"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/noderun"
)

// TestNodeRunsOnlyForTheManager: only a caller RBAC grants create on the
// non-resource URL wire.NodeRunsPath starts, reads or suspends runs; a
// namespace's user, who may run its Transforms on its data, may not.
func TestNodeRunsOnlyForTheManager(t *testing.T) {
	e, f := authEnv(t)
	f.grant("alice", use("default", "t"), dataAccess(readData, "default"), dataAccess(writeData, "default"))
	f.allowed["manager"] = map[string]bool{}
	f.grant("manager", manageRuns)
	e.writeObject("raw/x", []byte("x"))
	spec := `{"uid":"u1","pipeline":"t","source":{"prefix":"raw"},"destination":{"prefix":"out"},"workers":1}`
	calls := []struct{ method, url, body string }{
		{http.MethodPut, e.runURL("r1", ""), spec},
		{http.MethodGet, e.runURL("r1", "u1"), ""},
		{http.MethodDelete, e.runURL("r1", "u1"), ""},
	}
	for _, token := range []string{"", "alice"} {
		e.token = token
		want := map[string]int{"": http.StatusUnauthorized, "alice": http.StatusForbidden}[token]
		for _, c := range calls {
			if a := e.do(c.method, c.url, strings.NewReader(c.body)); a.status != want {
				t.Errorf("%q: %s: %d %s, want %d", token, c.method, a.status, a.body, want)
			}
		}
	}
	if e.agent.runs.Get(noderun.Key{Namespace: "default", Name: "r1"}) != nil || e.exists("out") {
		t.Fatal("a refused caller started a run")
	}
	e.token = "manager"
	for _, c := range calls {
		if a := e.do(c.method, c.url, strings.NewReader(c.body)); a.status != http.StatusOK {
			t.Errorf("manager: %s: %d %s", c.method, a.status, a.body)
		}
	}
}

func TestNodeRunRefusals(t *testing.T) {
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	e.writeObject("raw/x", []byte("x"))
	with := func(change func(*wire.NodeRunSpec)) wire.NodeRunSpec {
		s := prefixRun("t", 1)
		change(&s)
		return s
	}
	cases := map[string]struct {
		name string
		spec any
		want int
		msg  string
	}{
		"unknown field":   {"r1", map[string]any{"uid": "u", "wrkers": 2}, 400, `unknown field "wrkers"`},
		"bad run name":    {"R_1", prefixRun("t", 1), 400, `bad run name "R_1"`},
		"bad uid":         {"r1", with(func(s *wire.NodeRunSpec) { s.UID = "../x" }), 400, `uid "../x"`},
		"no workers":      {"r1", with(func(s *wire.NodeRunSpec) { s.Workers = 0 }), 400, "workers 0: must be between 1 and 64"},
		"two sources":     {"r1", with(func(s *wire.NodeRunSpec) { s.Source.Template = "a{1..2}" }), 400, "exactly one of prefix, objects and template"},
		"no source":       {"r1", with(func(s *wire.NodeRunSpec) { s.Source.Prefix = "" }), 400, "exactly one of"},
		"escaping source": {"r1", with(func(s *wire.NodeRunSpec) { s.Source.Prefix = "../team-b" }), 400, `source.prefix: object "../team-b" contains ..`},
		"root as destination": {"r1", with(func(s *wire.NodeRunSpec) { s.Destination.Prefix = "." }), 400,
			"not its root"},
		"hidden object": {"r1", with(func(s *wire.NodeRunSpec) {
			s.Source = etlv1alpha1.RunSource{Objects: []string{"out/.mlkube-run-u/journal"}}
		}), 400, "hidden"},
		"bad template":        {"r1", with(func(s *wire.NodeRunSpec) { s.Source = etlv1alpha1.RunSource{Template: "a{9..1}"} }), 400, "ends before it starts"},
		"toExtension alone":   {"r1", with(func(s *wire.NodeRunSpec) { s.Destination.ToExtension = ".wav" }), 400, "needs source.extension"},
		"oversized args":      {"r1", with(func(s *wire.NodeRunSpec) { s.Args = strings.Repeat("a", wire.MaxArgs+1) }), 400, "wire.MaxArgs"},
		"unknown transform":   {"r1", with(func(s *wire.NodeRunSpec) { s.Pipeline = "t>>nope" }), 404, "transform default/nope not found"},
		"too many stages":     {"r1", with(func(s *wire.NodeRunSpec) { s.Pipeline = strings.Repeat("t>>", 8) + "t" }), 400, "more than 8 stages"},
		"destination is file": {"r1", with(func(s *wire.NodeRunSpec) { s.Destination.Prefix = "raw/x" }), 400, `"raw/x" is not a directory`},
		"same dirs":           {"r1", with(func(s *wire.NodeRunSpec) { s.Destination.Prefix = "raw" }), 400, "overlaps"},
		"valid":               {"r1", prefixRun("t", 1), 200, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Each case its own run: a run that ended answers its status.
			run := tc.name
			if run == "r1" {
				run = strings.ToLower(strings.ReplaceAll(name, " ", "-"))
			}
			a, _ := e.putRun(run, tc.spec)
			if a.status == http.StatusOK {
				e.waitRun(run)
			}
			if a.status != tc.want || (tc.msg != "" && !strings.Contains(a.apiError(t).Error, tc.msg)) {
				t.Errorf("answer %d %s, want %d with %q", a.status, a.body, tc.want, tc.msg)
			}
		})
	}
	for url, want := range map[string]int{
		e.url + wire.NodeRunsPath + "Default/r1":   400,
		e.url + wire.NodeRunsPath + "default":      400,
		e.runURL("nope", ""):                       404,
		e.runURL("valid", "another-uid"):           404,
		e.url + wire.NodeRunsPath + "default/r1/x": 400,
	} {
		if a := e.do(http.MethodGet, url, nil); a.status != want {
			t.Errorf("GET %s: %d %s, want %d", url, a.status, a.body, want)
		}
	}
	if a := e.do(http.MethodGet, e.runURL("valid", testUID), nil); a.status != http.StatusOK {
		t.Errorf("GET of the valid run: %d %s", a.status, a.body)
	}
	if a := e.do(http.MethodPost, e.runURL("r1", ""), nil); a.status != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d %s", a.status, a.body)
	}
}
