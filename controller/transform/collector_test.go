package transform

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/scheme"
)

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
