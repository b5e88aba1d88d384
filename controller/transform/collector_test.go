package transform

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/internal/agentclient"
)

var statsKey = wire.StatsKey("default", "md5")

// serveStats plays a node agent answering r on wire.StatsPath once admit lets the request in
// (admit answers the status to refuse with, or 0), and returns its port.
func serveStats(t *testing.T, r wire.StatsReport, admit func(*http.Request) int) int {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != wire.StatsPath {
			http.NotFound(w, req)
			return
		}
		if code := admit(req); code != 0 {
			w.WriteHeader(code)
			return
		}
		_ = json.NewEncoder(w).Encode(r)
	}))
	t.Cleanup(s.Close)
	_, portStr, _ := net.SplitHostPort(s.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	return port
}

func agentPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "mlkube-datapath", Labels: map[string]string{"app": "agent"}},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1"},
	}
}

func newTestCollector(port int, pods ...*corev1.Pod) *Collector {
	b := fake.NewClientBuilder().WithScheme(scheme.New())
	for _, p := range pods {
		b = b.WithObjects(p)
	}
	return NewCollector(b.Build(), "mlkube-datapath", map[string]string{"app": "agent"}, port)
}

func nodeAReport(objects int64) wire.StatsReport {
	return wire.StatsReport{Node: "node-a", Transforms: map[string]wire.TransformStats{statsKey: {Counters: v1alpha1.Counters{Objects: objects}}}}
}

// TestCollectorPullsEveryAgent serves an agent's stats over HTTP and checks that a collection
// gathers the running agent, skips one not yet running, and signals only changed Transforms.
func TestCollectorPullsEveryAgent(t *testing.T) {
	port := serveStats(t, nodeAReport(1), func(*http.Request) int { return 0 })
	pending := agentPod("pending", "node-b")
	pending.Status = corev1.PodStatus{Phase: corev1.PodPending}
	c := newTestCollector(port, agentPod("agent-a", "node-a"), pending)
	c.collect(context.Background())
	got := c.Latest()
	if len(got) != 1 || got["node-a"].Transforms[statsKey].Counters.Objects != 1 {
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

// TestCollectorPresentsTheRotatedToken: every pull carries the projected token as a bearer
// token, and once the kubelet has replaced the file the next read presents the new one.
func TestCollectorPresentsTheRotatedToken(t *testing.T) {
	var want atomic.Value
	want.Store("Bearer first")
	port := serveStats(t, nodeAReport(1), func(req *http.Request) int {
		if req.Header.Get("Authorization") != want.Load().(string) {
			return http.StatusUnauthorized
		}
		return 0
	})
	path := filepath.Join(t.TempDir(), "token")
	writeToken(t, path, "first\n") // the kubelet's file may end in a newline
	clk := clocktesting.NewFakePassiveClock(time.Now())
	c := newTestCollector(port, agentPod("agent-a", "node-a"))
	c.Token = &agentclient.TokenFile{Path: path, Clock: clk}
	c.collect(context.Background())
	if _, ok := c.Latest()["node-a"]; !ok {
		t.Fatal("the agent refused the first token")
	}

	writeToken(t, path, "second")
	want.Store("Bearer second")
	clk.SetTime(clk.Now().Add(agentclient.TokenMaxAge))
	c.collect(context.Background())
	if _, ok := c.Latest()["node-a"]; !ok {
		t.Fatal("the rotated token was not presented")
	}
}

// TestCollectorWithoutItsToken: a missing token file stops the pull before any request (every
// agent would refuse it); an agent's 401 is told apart from a network failure as a refusal.
func TestCollectorWithoutItsToken(t *testing.T) {
	var requests atomic.Int32
	port := serveStats(t, nodeAReport(1), func(*http.Request) int {
		requests.Add(1)
		return http.StatusUnauthorized
	})
	c := newTestCollector(port, agentPod("agent-a", "node-a"))
	c.Token = agentclient.NewTokenFile(filepath.Join(t.TempDir(), "missing"))
	c.collect(context.Background())
	if n := requests.Load(); n != 0 {
		t.Errorf("%d pulls without a token; want none", n)
	}
	if _, err := c.Token.Token(); err == nil {
		t.Error("a missing token file read without error")
	}

	_, err := c.fetch(context.Background(), "127.0.0.1", "")
	if !errors.Is(err, agentclient.ErrRefused) {
		t.Errorf("fetch answered 401 gave %v; want a refusal", err)
	}
}

func writeToken(t *testing.T, path, token string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
}
