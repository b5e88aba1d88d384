package suite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/loadgen"
	"github.com/mlkube/mlkube/internal/ws"
)

// The hostile suite's attacks on the node's shared resources (findings 8 and 9): disk space under
// a namespace quota, and the node-wide caps shared fairly among namespaces.

// quotaAnnotation is the Namespace annotation by which a cluster admin sets a namespace's quota
// of bytes per node (the agent's QuotaAnnotation; docs/datapath-rbac.md), over the agent's
// --namespace-quota, which the e2e cluster leaves unset: no quota.
const quotaAnnotation = "data.mlkube.io/quota-per-node"

// fillQuota is A's quota on each node during the disk fill.
const fillQuota = 1 << 20

// Finding 8: a TransformRun's results had no bound but the disk. A cluster admin gives A a quota
// of 1 MiB per node; alice fills it on every node with PUTs and with a run of the identity
// transformer over 900 KiB of her objects, whose results would double them. Her PUTs past the
// quota are refused 507 naming it, as before; her run's results now go through the same quota
// and fail naming it, so A holds no more than its quota on any node and no partial or temporary
// file shows in its listing. Without the fix (results written with no reservation, as
// durable.Create alone did) the run succeeds, its results making A hold 1.8 MiB on each node:
// the wait for the run's failure fails (seen with the fix taken out), and after it the sum of A's
// listed bytes per node would. Meanwhile bob's run and his PUTs
// of more than A's whole quota work on every node, outputs exact: the quota is A's alone.
func (f *tenants) diskFill(t *testing.T) {
	// A holds what the attacks before left (48 MiB of the stalling hpull's on each node): alice
	// deletes it, so that A's bytes on every node start at none under the quota.
	f.aDeleteAll(t)
	f.setQuota(t, f.nsA, fillQuota)
	for _, node := range f.nodes {
		f.waitQuota(t, node)
	}

	echo := f.aTransform(t, "echo", v1alpha1.CommWS, restrictedTransformer(echoImage))
	const src, srcSize = 3, 300 << 10
	for _, node := range f.nodes {
		shard := map[string][]byte{}
		for i := range src {
			shard[fmt.Sprintf("src/%s-%d.bin", node, i)] = bytes.Repeat([]byte{byte('a' + i)}, srcSize)
		}
		putObjects(t, f.nsA, node, shard)
	}
	run := &v1alpha1.TransformRun{
		ObjectMeta: metav1.ObjectMeta{Name: "fill", Namespace: f.nsA},
		Spec: v1alpha1.TransformRunSpec{
			Transform:   echo.Name,
			Source:      v1alpha1.RunSource{Prefix: "src"},
			Destination: v1alpha1.RunDestination{Prefix: "out"},
		},
	}
	f.alice.MustCreate(t, run)
	// B's run goes on beside A's, which fails object after object at the quota.
	f.bRun(t, "during-fill")
	got := waitRun(t, run, v1alpha1.RunFailed)
	if len(got.Status.Errors) == 0 {
		t.Errorf("A's run over the quota failed with no object errors: %s", runMessages(got))
	}
	for _, e := range got.Status.Errors {
		if e.StatusCode != http.StatusInsufficientStorage || !strings.Contains(e.Message, "quota") || !strings.Contains(e.Message, quotaAnnotation) {
			t.Errorf("A's run: object %s failed with %d %.400q, want 507 naming the quota and %s", e.Object, e.StatusCode, e.Message, quotaAnnotation)
		}
	}
	t.Logf("A's run: %s; errors: %.600v", runMessages(got), got.Status.Errors)

	// Then PUTs of 64 KiB until the quota refuses one, on every node.
	for _, node := range f.nodes {
		for i := 0; ; i++ {
			if i > 2*fillQuota/(64<<10) {
				t.Fatalf("%d PUTs of 64 KiB into A on %s, over twice its quota, all accepted", i, node)
			}
			code, body := call(f.agents[node], http.MethodPut, objectPath(f.nsA, fmt.Sprintf("fill/%s-%d.bin", node, i))+"?"+url.Values{wire.QueryNode: {node}}.Encode(), f.tokenA, make([]byte, 64<<10))
			if code == http.StatusCreated {
				continue
			}
			if code != http.StatusInsufficientStorage || !strings.Contains(body, "quota") || !strings.Contains(body, quotaAnnotation) {
				t.Errorf("A's PUT %d of 64 KiB on %s: %d %.400q, want 201 or 507 naming the quota and %s", i, node, code, body, quotaAnnotation)
			}
			t.Logf("A's PUT %d of 64 KiB on %s: %d %.400s", i, node, code, body)
			break
		}
	}

	f.aWithinQuota(t, srcSize)

	// B, with no quota, stores on every node more than A's whole quota while A's is full.
	for _, node := range f.nodes {
		name := "own/fill-" + node + ".bin"
		data := bytes.Repeat([]byte("b"), fillQuota)
		if err := putObject(f.agents[node], f.nsB, node, name, f.tokenB, data); err != nil {
			t.Errorf("B's PUT of %d bytes on %s while A is at its quota: %v", len(data), node, err)
			continue
		}
		f.wrote(name, data)
	}
}

// aWithinQuota lists A's objects and checks that A holds at most fillQuota bytes on each node,
// and only whole objects: the sources and fills it PUT, the run's results whole (the identity of
// a source, resultSize bytes), its error manifests; nothing hidden or half written.
func (f *tenants) aWithinQuota(t *testing.T, resultSize int64) {
	t.Helper()
	list := f.aObjects(t)
	used := map[string]int64{}
	for _, o := range list.Items {
		used[o.Node] += o.Size
		base := o.Name[strings.LastIndex(o.Name, "/")+1:]
		switch {
		case strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".tmp"):
			t.Errorf("A's listing shows a temporary file %s (%d bytes) on %s", o.Name, o.Size, o.Node)
		case strings.HasPrefix(o.Name, "out/") && !strings.HasPrefix(base, "mlkube-errors-") && o.Size != resultSize:
			t.Errorf("A's run result %s on %s is %d bytes, not its source's %d: written in part", o.Name, o.Node, o.Size, resultSize)
		}
	}
	for _, node := range f.nodes {
		if used[node] > fillQuota {
			t.Errorf("A holds %d bytes on %s, past its quota of %d", used[node], node, fillQuota)
		}
		t.Logf("A holds %d of its %d bytes on %s", used[node], fillQuota, node)
	}
}

// aObjects is the listing of A's objects, as alice, through the first node's agent: each item
// names the node it is on.
func (f *tenants) aObjects(t *testing.T) wire.ObjectList {
	t.Helper()
	list, err := listObjects(t, f.agents[f.nodes[0]], f.nsA, "", f.tokenA)
	if err != nil {
		t.Fatal(err)
	}
	if list.Next != "" {
		t.Fatal("A's objects fill more than a page: the suite reads one")
	}
	return list
}

// aDeleteAll deletes every object of A, as alice.
func (f *tenants) aDeleteAll(t *testing.T) {
	t.Helper()
	list := f.aObjects(t)
	for _, o := range list.Items {
		if code, body := call(f.agents[o.Node], http.MethodDelete, objectPath(f.nsA, o.Name), f.tokenA, nil); code/100 != 2 {
			t.Fatalf("alice deleting her %s on %s: %d %.300q", o.Name, o.Node, code, body)
		}
	}
}

// setQuota annotates namespace ns with a quota of bytes per node, as a cluster admin does.
func (f *tenants) setQuota(t *testing.T, ns string, bytes int64) {
	t.Helper()
	var n corev1.Namespace
	if err := k8s.Get(context.Background(), client.ObjectKey{Name: ns}, &n); err != nil {
		t.Fatal(err)
	}
	old := n.DeepCopy()
	if n.Annotations == nil {
		n.Annotations = map[string]string{}
	}
	n.Annotations[quotaAnnotation] = fmt.Sprint(bytes)
	if err := k8s.Patch(context.Background(), &n, client.MergeFrom(old)); err != nil {
		t.Fatalf("annotating namespace %s with its quota: %v", ns, err)
	}
}

// waitQuota waits until node's agent holds A to its quota, which it learns from its cache of
// Namespaces: alice's PUTs of one byte more than the quota, each under a new name (an overwrite
// needs only what it adds), until one is refused. Those accepted meanwhile are deleted at once.
func (f *tenants) waitQuota(t *testing.T, node string) {
	t.Helper()
	deadline := time.Now().Add(pollTimeout)
	for i := 0; ; i++ {
		name := fmt.Sprintf("probe/%s-%d.bin", node, i)
		code, body := call(f.agents[node], http.MethodPut, objectPath(f.nsA, name)+"?"+url.Values{wire.QueryNode: {node}}.Encode(), f.tokenA, make([]byte, fillQuota+1))
		switch {
		case code == http.StatusInsufficientStorage && strings.Contains(body, quotaAnnotation):
			return
		case code != http.StatusCreated:
			t.Fatalf("alice's PUT of %d bytes on %s: %d %.300q, want 201 or 507 naming %s", fillQuota+1, node, code, body, quotaAnnotation)
		case time.Now().After(deadline):
			t.Fatalf("the agent on %s did not hold A to the quota its Namespace was annotated with within %s", node, pollTimeout)
		}
		if code, body := call(f.agents[node], http.MethodDelete, objectPath(f.nsA, name), f.tokenA, nil); code/100 != 2 {
			t.Fatalf("alice deleting her probe %s: %d %.300q", name, code, body)
		}
		time.Sleep(time.Second)
	}
}

// Finding 9: the node's 256 streams (--max-streams) went to whoever took them first. Alice, alone,
// takes every stream of a node and her next is refused naming the limit; she gives two back and
// bob asks: he is admitted (after refusals while her streams' ends reach the agent, which make
// him a namespace that waits). Alice asks again, with a slot free: she is refused with 429 naming
// her fair share and the flag, since she holds far more than half the node while B uses it.
// Without the fix (one node-wide count) her ask is admitted, the slot being free, and the test
// fails (seen with the share taken out of fairshare.Cap.Admit).
func (f *tenants) fairShare(t *testing.T) {
	node := f.nodes[0]
	tr := f.aTransform(t, "streams", v1alpha1.CommWS, restrictedTransformer("mlkube/transformer-md5:dev"))
	aURL, bURL := loadgen.StreamURL(f.agents[node], f.nsA, tr.Name), loadgen.StreamURL(f.agents[node], f.nsB, f.md5.Name)
	var held []loadgen.AgentStream
	defer func() {
		for _, s := range held {
			s.Close()
		}
	}()

	// Far past any --max-streams the cluster could set: a node that never refuses fails.
	const most = 4096
	var full error
	for len(held) < most {
		s, err := dialStream(aURL, f.tokenA)
		if err != nil {
			full = err
			break
		}
		held = append(held, s)
	}
	if code, msg := handshakeRefusal(full); code != http.StatusTooManyRequests || !strings.Contains(msg, "--max-streams") {
		t.Fatalf("alice, alone, opened %d streams on %s, then: %v; want 429 naming --max-streams", len(held), node, full)
	}
	t.Logf("alice holds %d streams on %s; her next: %v", len(held), node, full)
	if err := f.bInline(node, 2); err != nil {
		t.Errorf("B's inline requests on %s while A holds every stream: %v", node, err)
	}

	held[0].Close()
	held[1].Close()
	held = held[2:]
	bs := waitAdmitted(t, "bob's stream", bURL, f.tokenB)
	defer bs.Close()
	name := f.rawOn(node)[0]
	if err := bs.Send(f.raw[name]); err != nil {
		t.Fatalf("bob sending %s on his stream: %v", name, err)
	}
	var out bytes.Buffer
	if err := bs.Receive(&out); err != nil || out.String() != md5hex(f.raw[name]) {
		t.Errorf("bob's stream answered %s with %q, %v; want %s", name, out.String(), err, md5hex(f.raw[name]))
	}

	// A slot is free once both of alice's ends reached the agent; until then a refusal says the
	// node is full, which is no test of the share.
	deadline := time.Now().Add(pollTimeout)
	for {
		s, err := dialStream(aURL, f.tokenA)
		if err == nil {
			held = append(held, s)
			t.Fatalf("alice, holding %d of %s's streams while bob holds one, was admitted another: more than her fair share", len(held)-1, node)
		}
		code, msg := handshakeRefusal(err)
		if code == http.StatusTooManyRequests && strings.Contains(msg, "fair share") {
			if !strings.Contains(msg, "--max-streams") || !strings.Contains(msg, f.nsA) {
				t.Errorf("alice's refusal %q does not name her namespace %s and --max-streams", msg, f.nsA)
			}
			t.Logf("alice, holding %d streams beside bob's: %s", len(held), msg)
			return
		}
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("alice asking for a stream beside bob's, with two given back: %v; want 429 naming her fair share", err)
		}
		time.Sleep(time.Second)
	}
}

// dialStream opens a stream at url with token, the handshake bounded.
func dialStream(url, token string) (loadgen.AgentStream, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return loadgen.DialAgentStream(ctx, url, token)
}

// handshakeRefusal is the status and message of a refused stream handshake; 0 for another error.
func handshakeRefusal(err error) (int, string) {
	if he, ok := errors.AsType[*ws.HandshakeError](err); ok {
		return he.Status, he.Body
	}
	return 0, fmt.Sprint(err)
}

// waitAdmitted opens a stream at url, retrying while it is refused with 429.
func waitAdmitted(t *testing.T, who, url, token string) loadgen.AgentStream {
	t.Helper()
	deadline := time.Now().Add(pollTimeout)
	for {
		s, err := dialStream(url, token)
		if err == nil {
			return s
		}
		if code, _ := handshakeRefusal(err); code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("%s: %v", who, err)
		}
		time.Sleep(time.Second)
	}
}

// runMessages are a run's phase and its nodes' messages.
func runMessages(r *v1alpha1.TransformRun) string {
	var b strings.Builder
	b.WriteString(string(r.Status.Phase))
	for _, n := range r.Status.Nodes {
		fmt.Fprintf(&b, "; %s: %s %s", n.Node, n.Phase, n.Message)
	}
	return b.String()
}
