package transform

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/scheme"
)

func objErr(object, node string, sec int) v1alpha1.ObjectError {
	return v1alpha1.ObjectError{Object: object, Node: node, Message: "boom", StatusCode: 502, Time: metav1.NewTime(now.Add(time.Duration(sec) * time.Second))}
}

func TestApplyStats(t *testing.T) {
	key := wire.StatsKey("default", "md5")
	reports := map[string]wire.StatsReport{
		"node-1": {Node: "node-1", Transforms: map[string]wire.TransformStats{
			key:             {Counters: v1alpha1.Counters{Objects: 10, BytesIn: 100, BytesOut: 50, Errors: 2}, Errors: []v1alpha1.ObjectError{objErr("a", "node-1", 1), objErr("c", "node-1", 3)}},
			"default/other": {Counters: v1alpha1.Counters{Objects: 99}},
		}},
		"node-2": {Node: "node-2", Transforms: map[string]wire.TransformStats{
			key: {Counters: v1alpha1.Counters{Objects: 5, BytesIn: 10, BytesOut: 5, Errors: 1}, Errors: []v1alpha1.ObjectError{objErr("b", "node-2", 2)}},
		}},
	}
	st := &v1alpha1.TransformStatus{Nodes: []v1alpha1.NodeStatus{{Node: "node-1"}, {Node: "node-2"}, {Node: "node-3"}}}
	applyStats(st, key, reports)
	if diff := cmp.Diff(v1alpha1.Counters{Objects: 15, BytesIn: 110, BytesOut: 55, Errors: 3}, st.Totals); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
	if st.Nodes[0].Objects != 10 || st.Nodes[1].Objects != 5 || st.Nodes[2].Objects != 0 {
		t.Errorf("per-node objects %d %d %d; want 10 5 0", st.Nodes[0].Objects, st.Nodes[1].Objects, st.Nodes[2].Objects)
	}
	var order []string
	for _, e := range st.Errors {
		order = append(order, e.Object)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, order); diff != "" {
		t.Errorf("errors oldest first across nodes (-want +got):\n%s", diff)
	}
}

func TestApplyStatsKeepsTheNewestErrors(t *testing.T) {
	key := wire.StatsKey("default", "md5")
	var errs []v1alpha1.ObjectError
	for i := range 200 {
		errs = append(errs, objErr(strconv.Itoa(i), "node-1", i))
	}
	st := &v1alpha1.TransformStatus{Nodes: []v1alpha1.NodeStatus{{Node: "node-1"}}}
	applyStats(st, key, map[string]wire.StatsReport{"node-1": {Transforms: map[string]wire.TransformStats{key: {Errors: errs}}}})
	if len(st.Errors) != v1alpha1.MaxObjectErrors || st.Errors[0].Object != "72" || st.Errors[127].Object != "199" {
		t.Errorf("kept %d errors from %s to %s; want the newest 128, 72 to 199", len(st.Errors), st.Errors[0].Object, st.Errors[len(st.Errors)-1].Object)
	}
}

func TestApplyStatsWithoutReportsKeepsCounters(t *testing.T) {
	st := &v1alpha1.TransformStatus{Nodes: []v1alpha1.NodeStatus{{Node: "node-1", Counters: v1alpha1.Counters{Objects: 7}}},
		Errors: []v1alpha1.ObjectError{objErr("x", "node-1", 0)}}
	applyStats(st, "default/md5", nil)
	if st.Totals.Objects != 7 || len(st.Errors) != 1 {
		t.Errorf("totals %+v errors %d; want the standing figures", st.Totals, len(st.Errors))
	}
}

// TestCollectorPullsEveryAgent serves an agent's stats over HTTP and checks that a collection
// gathers the running agent, skips one not yet running, and signals only changed Transforms.
func TestCollectorPullsEveryAgent(t *testing.T) {
	serve := func(r wire.StatsReport) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.URL.Path != wire.StatsPath {
				http.NotFound(w, req)
				return
			}
			_ = json.NewEncoder(w).Encode(r)
		}))
	}
	key := wire.StatsKey("default", "md5")
	a := serve(wire.StatsReport{Node: "node-a", Transforms: map[string]wire.TransformStats{key: {Counters: v1alpha1.Counters{Objects: 1}}}})
	defer a.Close()
	_, portStr, _ := net.SplitHostPort(a.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	agentPod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "mlkube-datapath", Labels: map[string]string{"app": "agent"}},
			Spec:       corev1.PodSpec{NodeName: node},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1"},
		}
	}
	pending := agentPod("pending", "node-b")
	pending.Status = corev1.PodStatus{Phase: corev1.PodPending}
	cl := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(agentPod("agent-a", "node-a"), pending).Build()
	c := NewCollector(cl, "mlkube-datapath", map[string]string{"app": "agent"}, port)
	c.collect(context.Background())
	got := c.Latest()
	if len(got) != 1 || got["node-a"].Transforms[key].Counters.Objects != 1 {
		t.Fatalf("reports %+v; want node-a's", got)
	}
	select {
	case ev := <-c.Changes():
		if ev.Object.GetNamespace() != "default" || ev.Object.GetName() != "md5" {
			t.Errorf("changed %s/%s; want default/md5", ev.Object.GetNamespace(), ev.Object.GetName())
		}
	default:
		t.Error("no change signalled for default/md5")
	}
	c.collect(context.Background())
	select {
	case ev := <-c.Changes():
		t.Errorf("an unchanged collection signalled %s", ev.Object.GetName())
	default:
	}
}
