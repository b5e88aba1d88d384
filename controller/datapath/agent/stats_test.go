package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// TestStatsAndMetrics counts objects, bytes and errors per Transform of a
// pipeline, and serves them on /v1/stats and /metrics.
func TestStatsAndMetrics(t *testing.T) {
	e := newEnv(t)
	e.addTransform("a", etlv1alpha1.CommHPush, "", tag("a"))
	e.addTransform("b", etlv1alpha1.CommWS, "", fail("no"))
	e.put("a", "obj", wire.Query{}, []byte("12345")) // 5 in, 8 out ("|a:" appended)
	e.put("a>>b", "bad", wire.Query{}, []byte("1"))  // a: 1 in, 4 out; b fails
	e.get("a", "missing", wire.Query{})              // fails before a runs

	var rep wire.StatsReport
	a := e.do(http.MethodGet, e.url+wire.StatsPath, nil)
	if err := json.Unmarshal(a.body, &rep); err != nil {
		t.Fatalf("stats %q: %v", a.body, err)
	}
	for k, tr := range rep.Transforms {
		for i := range tr.Errors {
			tr.Errors[i].Time = metav1Zero
		}
		rep.Transforms[k] = tr
	}
	want := wire.StatsReport{Node: testNode, Transforms: map[string]wire.TransformStats{
		"default/a": {
			Counters: etlv1alpha1.Counters{Objects: 3, BytesIn: 6, BytesOut: 12, Errors: 1},
			Errors:   []etlv1alpha1.ObjectError{{Object: "missing", Message: `object "missing" not found`, StatusCode: 404, Node: testNode}},
		},
		"default/b": {
			Counters: etlv1alpha1.Counters{Objects: 1, BytesIn: 4, Errors: 1},
			Errors:   []etlv1alpha1.ObjectError{{Object: "bad", Message: "no", StatusCode: 502, Node: testNode}},
		},
	}}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}

	m := string(e.do(http.MethodGet, e.url+PathMetrics, nil).body)
	for _, line := range []string{
		`mlkube_datapath_objects_total{communication="hpush",transform="default/a"} 3`,
		`mlkube_datapath_bytes_out_total{communication="hpush",transform="default/a"} 12`,
		`mlkube_datapath_errors_total{code="502",communication="ws",transform="default/b"} 1`,
		`mlkube_datapath_object_duration_seconds_count{communication="ws",transform="default/b"} 1`,
	} {
		if !strings.Contains(m, line) {
			t.Errorf("metrics lack %q", line)
		}
	}
}

var metav1Zero = etlv1alpha1.ObjectError{}.Time

// TestErrorRing keeps the last MaxObjectErrors errors, oldest first.
func TestErrorRing(t *testing.T) {
	r := recorder{node: testNode}
	total := etlv1alpha1.MaxObjectErrors + 5
	for i := range total {
		r.observe("ns/t", 1, 0, fmt.Sprint(i), 502, "m", time.Unix(int64(i), 0))
	}
	got := r.report().Transforms["ns/t"]
	if got.Counters.Errors != int64(total) || len(got.Errors) != etlv1alpha1.MaxObjectErrors {
		t.Fatalf("%d errors counted, %d kept; want %d, %d", got.Counters.Errors, len(got.Errors), total, etlv1alpha1.MaxObjectErrors)
	}
	if first, last := got.Errors[0].Object, got.Errors[len(got.Errors)-1].Object; first != "5" || last != fmt.Sprint(total-1) {
		t.Errorf("kept errors %s..%s, want 5..%d", first, last, total-1)
	}
}

// TestHPullRedirect checks that an inline hpull GET is redirected to the
// transformer with the agent's raw object URL (or the client's src, or the
// fqn) and that the transformer's own error reaches the client.
func TestHPullRedirect(t *testing.T) {
	e := newEnv(t)
	s := e.addTransform("t", etlv1alpha1.CommHPull, "", echo)
	e.addTransform("bad", etlv1alpha1.CommHPull, "", fail("pull failed"))
	e.writeObject("dir/obj", []byte("data"))
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(e.transformURL("t", "dir/obj", wire.Query{Args: "x"}))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wantLoc := wire.ObjectURL(s.URL, "dir/obj", wire.Query{Args: "x", Src: e.agent.opts.AdvertiseURL + PathObjects + "dir/obj"})
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != wantLoc {
		t.Errorf("got %d to %q, want 307 to %q", resp.StatusCode, resp.Header.Get("Location"), wantLoc)
	}
	a := e.get("bad", "dir/obj", wire.Query{})
	if a.status < 400 || string(a.body) != "pull failed" {
		t.Errorf("got %d %q, want the transformer's error", a.status, a.body)
	}
}

// TestConcurrentObjects sends many objects at once through every
// communicator; ws pipelines them over its pool. Run with -race.
func TestConcurrentObjects(t *testing.T) {
	for _, comm := range comms {
		t.Run(string(comm), func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.WSConns = 2 })
			e.addTransform("t", comm, "", tag("t"))
			e.addTransform("bad", comm, "", fail("odd"))
			var wg sync.WaitGroup
			for i := range 64 {
				wg.Go(func() {
					name, want, code := "t", fmt.Sprintf("%d|t:", i), http.StatusOK
					if i%3 == 0 {
						name, want, code = "bad", "odd", http.StatusBadGateway
					}
					a := e.put(name, fmt.Sprint(i), wire.Query{}, []byte(fmt.Sprint(i)))
					got := string(a.body)
					if code != http.StatusOK {
						got = a.apiError(t).Error
					}
					if a.status != code || got != want {
						t.Errorf("object %d: %d %q, want %d %q", i, a.status, got, code, want)
					}
				})
			}
			wg.Wait()
		})
	}
}

// A flood of failures with long names must not grow what status holds: the ring keeps at most
// MaxObjectErrors errors, each cut to MaxObjectErrorText bytes.
func TestErrorRingBoundsWhatItKeeps(t *testing.T) {
	var r errorRing
	long := strings.Repeat("x", 64<<10)
	for range 3 * etlv1alpha1.MaxObjectErrors {
		r.add(etlv1alpha1.ObjectError{Object: long, Message: long})
	}
	got := r.snapshot()
	if len(got) != etlv1alpha1.MaxObjectErrors {
		t.Fatalf("ring holds %d errors, want %d", len(got), etlv1alpha1.MaxObjectErrors)
	}
	for _, e := range got {
		if len(e.Object) > etlv1alpha1.MaxObjectErrorText || len(e.Message) > etlv1alpha1.MaxObjectErrorText {
			t.Fatalf("an error kept %d and %d bytes, want at most %d each", len(e.Object), len(e.Message), etlv1alpha1.MaxObjectErrorText)
		}
	}
}
