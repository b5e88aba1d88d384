package transformrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

func transformReadyOn(name string, nodes ...string) *v1alpha1.Transform {
	t := &v1alpha1.Transform{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, n := range nodes {
		t.Status.Nodes = append(t.Status.Nodes, v1alpha1.NodeStatus{Node: n, Ready: true})
	}
	t.Status.Nodes = append(t.Status.Nodes, v1alpha1.NodeStatus{Node: "not-ready"})
	return t
}

func TestChooseNodes(t *testing.T) {
	agents := map[string]string{"a": "ip", "b": "ip", "c": "ip", "not-ready": "ip"}
	nodes := []corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"pool": "etl"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "y", Labels: map[string]string{"pool": "gpu"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: map[string]string{"pool": "etl"}}},
	}
	cases := map[string]struct {
		pipeline   string
		selector   map[string]string
		transforms []*v1alpha1.Transform
		want       []string
	}{
		"every node whose agent and transformer are ready": {
			pipeline: "md5", transforms: []*v1alpha1.Transform{transformReadyOn("md5", "c", "a", "gone")},
			want: []string{"a", "c"},
		},
		"a pipeline needs every stage ready on the node": {
			pipeline: "upper>>md5", transforms: []*v1alpha1.Transform{transformReadyOn("md5", "a", "b"), transformReadyOn("upper", "b", "c")},
			want: []string{"b"},
		},
		"a stage with no Transform leaves no node": {
			pipeline: "upper>>md5", transforms: []*v1alpha1.Transform{transformReadyOn("md5", "a")},
		},
		"a copy: every node whose agent is ready": {
			pipeline: "", want: []string{"a", "b", "c", "not-ready"},
		},
		"a node selector is taken as it is": {
			pipeline: "md5", selector: map[string]string{"pool": "etl"},
			want: []string{"w", "x"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			run := &v1alpha1.TransformRun{Spec: v1alpha1.TransformRunSpec{Transform: tc.pipeline, NodeSelector: tc.selector}}
			byName := map[string]*v1alpha1.Transform{}
			for _, tr := range tc.transforms {
				byName[tr.Name] = tr
			}
			if diff := cmp.Diff(tc.want, chooseNodes(run, nodes, agents, byName)); diff != "" {
				t.Errorf("chooseNodes (-want +got):\n%s", diff)
			}
		})
	}
}
