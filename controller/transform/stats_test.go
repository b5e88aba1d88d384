package transform

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
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
