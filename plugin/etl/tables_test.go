package etl

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func TestBytes(t *testing.T) {
	got := []string{}
	for _, n := range []int64{0, 1023, 1024, 1536, 10 << 20, 5 << 30} {
		got = append(got, Bytes(n))
	}
	want := []string{"0B", "1023B", "1.0KiB", "1.5KiB", "10.0MiB", "5.0GiB"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestHealthTable(t *testing.T) {
	tr := &v1alpha1.Transform{Status: v1alpha1.TransformStatus{Nodes: []v1alpha1.NodeStatus{
		{Node: "a", Pod: "md5-1", Ready: true},
		{Node: "b", Pod: "md5-2", Restarts: 3},
		{Node: "c"},
	}}}
	tbl, unhealthy := HealthTable(tr)
	var got [][]any
	for _, r := range tbl.Rows {
		got = append(got, r.Cells)
	}
	want := [][]any{{"a", "md5-1", "Healthy", int32(0)}, {"b", "md5-2", "NotReady", int32(3)}, {"c", "<none>", "NoPod", int32(0)}}
	if diff := cmp.Diff(want, got); diff != "" || unhealthy != 2 {
		t.Errorf("unhealthy %d, rows (-want +got):\n%s", unhealthy, diff)
	}
}
