package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// TestHPullGetGoesThroughTheAgent: an inline hpull GET is answered by the
// agent, not redirected to the transformer (transformers take traffic from
// agents only); the transformer fetched the object from an in-flight URL of
// the agent, which is no longer served once used; the transformer's own
// error reaches the client.
func TestHPullGetGoesThroughTheAgent(t *testing.T) {
	e := newEnv(t)
	// A bare hpull transformer that records where it fetched from.
	var srcs []string
	var mu sync.Mutex
	pull := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := wire.ParseQuery(r.URL.Query())
		mu.Lock()
		srcs = append(srcs, q.Src)
		mu.Unlock()
		resp, err := http.Get(q.Src)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		fmt.Fprintf(w, "%s|%s", data, q.Args)
	}))
	t.Cleanup(pull.Close)
	e.resolver.targets["default/t"] = Target{Namespace: "default", Name: "t", Communication: etlv1alpha1.CommHPull, ObjectTimeout: 10 * time.Second, URL: pull.URL}
	e.addTransform("bad", etlv1alpha1.CommHPull, "", fail("pull failed"))
	e.writeObject("dir/obj", []byte("data"))
	if a := e.get("t", "dir/obj", wire.Query{Args: "x"}); a.status != http.StatusOK || string(a.body) != "data|x" {
		t.Fatalf("GET: %d %q, want 200 \"data|x\"", a.status, a.body)
	}
	if len(srcs) != 1 || !strings.HasPrefix(srcs[0], e.agent.opts.AdvertiseURL+wire.PathInflight) {
		t.Fatalf("the transformer fetched from %q, want an in-flight URL of the agent", srcs)
	}
	if a := e.do(http.MethodGet, srcs[0], nil); a.status != http.StatusNotFound {
		t.Errorf("the in-flight URL answered %d %q after use, want 404", a.status, a.body)
	}
	a := e.get("bad", "dir/obj", wire.Query{})
	if a.status != http.StatusBadGateway || a.apiError(t).Error != "pull failed" {
		t.Errorf("got %d %q, want 502 with the transformer's error", a.status, a.body)
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
