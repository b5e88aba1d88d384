package transformrun

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// lastAddress numbers the fake agents' loopback addresses: 127.0.0.2 is the first.
var lastAddress atomic.Int32

func init() { lastAddress.Store(1) }

// fakeAgent plays one node's agent: each GET of a running share transforms perGet more of its
// planned objects (of 100 bytes each); its journal, kept across a restart, is what a resumed share
// skips.
type fakeAgent struct {
	node, ip string
	srv      *http.Server

	mu                 sync.Mutex
	planned, perGet    int64
	runs               map[string]*wire.NodeRunStatus // by namespace/run
	journal            map[string]int64               // objects done, by UID
	specs              []wire.NodeRunSpec             // every PUT
	puts, gets, delete int
}

// startAgent starts a fake agent for node and its agent pod, Ready at the agent's address.
func startAgent(t *testing.T, node string, planned, perGet int64) *fakeAgent {
	t.Helper()
	ip := "127.0.0." + strconv.Itoa(int(lastAddress.Add(1)))
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(agentPort)))
	if err != nil {
		t.Fatal(err)
	}
	a := &fakeAgent{node: node, ip: ip, planned: planned, perGet: perGet, runs: map[string]*wire.NodeRunStatus{}, journal: map[string]int64{}}
	a.srv = &http.Server{Handler: a, ReadHeaderTimeout: time.Second}
	go func() { _ = a.srv.Serve(l) }()
	t.Cleanup(func() { _ = a.srv.Close() })
	createAgentPod(t, node, ip)
	return a
}

func createAgentPod(t *testing.T, node, ip string) {
	t.Helper()
	pod := &corev1.Pod{
		// Named apart: without a kubelet a deleted pod stays, being deleted, for good.
		ObjectMeta: metav1.ObjectMeta{GenerateName: "agent-" + node + "-", Namespace: agentNamespace, Labels: agentSelector},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "agent", Image: "mlkube/node-agent:dev"}}},
	}
	k8s.CreateTemporary(t, pod)
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if err := k8s.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
}

func (a *fakeAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+agentToken {
		http.Error(w, "who are you", http.StatusUnauthorized)
		return
	}
	key := strings.TrimPrefix(r.URL.Path, wire.NodeRunsPath)
	a.mu.Lock()
	defer a.mu.Unlock()
	if r.Method == http.MethodPut {
		var spec wire.NodeRunSpec
		if err := json.NewDecoder(r.Body).Decode(&spec); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		a.puts++
		a.specs = append(a.specs, spec)
		if st := a.runs[key]; st == nil || st.Phase == v1alpha1.RunSuspended {
			// A new attempt: what the journal holds is skipped.
			done := a.journal[spec.UID]
			a.runs[key] = &wire.NodeRunStatus{UID: spec.UID, Node: a.node, Phase: v1alpha1.RunRunning, Started: time.Now(),
				RunCounts: v1alpha1.RunCounts{PlannedObjects: a.planned, PlannedBytes: 100 * a.planned, SkippedObjects: done}}
		}
		_ = json.NewEncoder(w).Encode(a.runs[key])
		return
	}
	st := a.runs[key]
	if st == nil || st.UID != r.URL.Query().Get("uid") {
		http.Error(w, "this node holds no such run", http.StatusNotFound)
		return
	}
	switch r.Method {
	case http.MethodGet:
		a.gets++
		a.advance(st)
	case http.MethodDelete:
		a.delete++
		if st.Phase == v1alpha1.RunRunning {
			st.Phase = v1alpha1.RunSuspended
		}
	}
	_ = json.NewEncoder(w).Encode(st)
}

// advance transforms perGet more objects of a running share.
func (a *fakeAgent) advance(st *wire.NodeRunStatus) {
	if st.Phase != v1alpha1.RunRunning {
		return
	}
	n := min(a.perGet, st.PlannedObjects-st.SkippedObjects-st.DoneObjects)
	st.DoneObjects += n
	st.DoneBytes += 100 * n
	a.journal[st.UID] += n
	if st.DoneObjects+st.SkippedObjects == st.PlannedObjects {
		st.Phase = v1alpha1.RunSucceeded
		now := time.Now()
		st.Finished = &now
	}
}

// restart forgets every run, as an agent that restarted does; the journals stay on disk.
func (a *fakeAgent) restart() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.runs = map[string]*wire.NodeRunStatus{}
}

func (a *fakeAgent) setPerGet(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.perGet = n
}

// calls returns how many PUTs, GETs and DELETEs the agent answered.
func (a *fakeAgent) calls() (puts, gets, deletes int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.puts, a.gets, a.delete
}

func (a *fakeAgent) lastSpec() wire.NodeRunSpec {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.specs) == 0 {
		return wire.NodeRunSpec{}
	}
	return a.specs[len(a.specs)-1]
}

func (a *fakeAgent) String() string { return fmt.Sprintf("agent of %s at %s", a.node, a.ip) }
