package agent

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/wire"
)

// staticPeers is a peer set the test sets.
type staticPeers struct {
	mu    sync.Mutex
	peers []Peer
}

func (s *staticPeers) Ready(context.Context) ([]Peer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.peers), nil
}

// peerSA is the agents' ServiceAccount in these tests; the fake Authorizer
// names each caller after its token.
const peerSA = "agent-sa"

// newPair is two agents, node-a and node-b, each the other's peer, with f
// as their Authorizer (nil allows all).
func newPair(t *testing.T, f *rbac) (*env, *env) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(peerSA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	peers := &staticPeers{}
	mk := func(node string) *env {
		return newObjectEnv(t, func(o *Options) {
			o.Node, o.Peers, o.PeerTokenFile, o.PeerServiceAccount, o.Access = node, peers, tokenFile, peerSA, f
		})
	}
	a, b := mk("node-a"), mk("node-b")
	peers.peers = []Peer{{Node: "node-a", URL: a.url}, {Node: "node-b", URL: b.url}}
	return a, b
}

func TestObjectsSpreadOverPeers(t *testing.T) {
	a, b := newPair(t, nil)
	var want []string
	for i := range 20 {
		name := fmt.Sprintf("shard-%02d", i)
		want = append(want, name)
		if resp, body := a.request(http.MethodPut, a.objectURL(name), strings.NewReader(name)); resp.code != http.StatusCreated {
			t.Fatalf("PUT %s: %d %s", name, resp.code, body)
		}
	}
	onA, onB := len(files(t, a.root)), len(files(t, b.root))
	if onA == 0 || onB == 0 || onA+onB != 20 {
		t.Fatalf("20 objects spread %d on node-a, %d on node-b", onA, onB)
	}
	for _, e := range []*env{a, b} {
		for _, name := range want {
			resp, body := e.request(http.MethodGet, e.objectURL(name), nil)
			if resp.code != http.StatusOK || string(body) != name {
				t.Fatalf("GET %s through %s: %d %q", name, e.agent.opts.Node, resp.code, body)
			}
			if _, err := os.Stat(filepath.Join(map[string]string{"node-a": a.root, "node-b": b.root}[resp.header.Get(wire.HeaderNode)], name)); err != nil {
				t.Errorf("%s answered from %q, which does not hold it", name, resp.header.Get(wire.HeaderNode))
			}
			if resp, _ := e.request(http.MethodHead, e.objectURL(name), nil); resp.code != http.StatusOK || resp.length != int64(len(name)) {
				t.Errorf("HEAD %s through %s: %d, %d bytes", name, e.agent.opts.Node, resp.code, resp.length)
			}
		}
		if diff := cmp.Diff(want, names(e.list(""))); diff != "" {
			t.Errorf("merged list through %s (-want +got):\n%s", e.agent.opts.Node, diff)
		}
		if diff := cmp.Diff(want, e.listAllPages("", 3)); diff != "" {
			t.Errorf("merged pages of 3 through %s (-want +got):\n%s", e.agent.opts.Node, diff)
		}
	}
	if resp, _ := a.request(http.MethodGet, a.objectURL("none"), nil); resp.code != http.StatusNotFound {
		t.Errorf("GET of an object no node holds: %d", resp.code)
	}
	// A remote DELETE, then one of every node's objects under a prefix.
	remote := files(t, b.root)[0]
	if resp, body := a.request(http.MethodDelete, a.objectURL(remote), nil); resp.code != http.StatusOK {
		t.Fatalf("DELETE of %s on node-b through node-a: %d %s", remote, resp.code, body)
	}
	if _, err := os.Stat(filepath.Join(b.root, remote)); !os.IsNotExist(err) {
		t.Errorf("%s is still on node-b", remote)
	}
	resp, body := a.request(http.MethodDelete, a.objectURL("shard-")+"?recursive=true", nil)
	if resp.code != http.StatusOK || !strings.Contains(string(body), `"deleted":19`) {
		t.Errorf("recursive DELETE over both nodes: %d %s", resp.code, body)
	}
	if n := len(files(t, a.root)) + len(files(t, b.root)); n != 0 {
		t.Errorf("%d objects left", n)
	}
}

func TestObjectPutOnNamedNode(t *testing.T) {
	a, b := newPair(t, nil)
	if resp, body := a.request(http.MethodPut, a.objectURL("x")+"?node=node-b", strings.NewReader("x")); resp.code != http.StatusCreated || resp.header.Get(wire.HeaderNode) != "node-b" {
		t.Fatalf("PUT ?node=node-b: %d %s", resp.code, body)
	}
	if _, err := os.Stat(filepath.Join(b.root, "x")); err != nil {
		t.Error(err)
	}
	resp, body := a.request(http.MethodPut, a.objectURL("x")+"?node=node-z", strings.NewReader("x"))
	if resp.code != http.StatusNotFound || !strings.Contains(string(body), "node-a, node-b") {
		t.Errorf("PUT ?node=node-z: %d %s", resp.code, body)
	}
}

func TestForwardedRequestsStayLocal(t *testing.T) {
	a, b := newPair(t, nil)
	b.request(http.MethodPut, b.objectURL("on-b")+"?node=node-b", bytes.NewReader([]byte("b")))
	// As a peer would send it: node-a answers from its own data only.
	resp, body := a.request(http.MethodGet, a.objectURL("on-b"), nil, wire.HeaderForwardedBy, peerSA)
	if resp.code != http.StatusNotFound {
		t.Errorf("a forwarded GET was forwarded again: %d %s", resp.code, body)
	}
	resp, body = a.request(http.MethodGet, a.listURL(""), nil, wire.HeaderForwardedBy, peerSA)
	if resp.code != http.StatusOK || strings.Contains(string(body), "on-b") {
		t.Errorf("the list of a forwarded request holds other nodes' objects: %d %s", resp.code, body)
	}
}

func TestForwarderTokenChecked(t *testing.T) {
	f := &rbac{allowed: map[string]map[string]bool{}}
	f.grant(peerSA)
	a, _ := newPair(t, f)
	f.grant("user", dataAccess(readData, "default"), dataAccess(writeData, "default"), dataAccess(wire.VerbList, "default"))
	a.token = "user"
	cases := map[string]struct {
		forwarder string
		want      int
	}{
		"forged":         {"not-a-token", http.StatusUnauthorized},
		"not an agent":   {"user", http.StatusForbidden},
		"agent":          {peerSA, http.StatusNotFound},
		"no caller auth": {peerSA, http.StatusUnauthorized},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a.token = "user"
			if name == "no caller auth" {
				a.token = ""
			}
			resp, body := a.request(http.MethodGet, a.objectURL("x"), nil, wire.HeaderForwardedBy, tc.forwarder)
			if resp.code != tc.want {
				t.Errorf("%d %s, want %d", resp.code, body, tc.want)
			}
		})
	}
	// Through the agents, with the caller's token checked on both.
	a.token = "user"
	if resp, body := a.request(http.MethodPut, a.objectURL("y")+"?node=node-b", strings.NewReader("y")); resp.code != http.StatusCreated {
		t.Fatalf("PUT through node-a to node-b: %d %s", resp.code, body)
	}
	if resp, body := a.request(http.MethodGet, a.objectURL("y"), nil); resp.code != http.StatusOK || string(body) != "y" {
		t.Errorf("GET through node-a from node-b: %d %s", resp.code, body)
	}
}

// A run writes into a destination that need not exist, on its own node, and
// the object API finds its outputs there from any agent.
func TestRunOutputsFoundThroughPeers(t *testing.T) {
	a, b := newPair(t, nil)
	b.addTransform("t", comms[0], "", tag("t"))
	b.writeObject("raw/x", []byte("object raw/x"))
	spec := prefixRun("t", 1)
	spec.Destination.Prefix = "new/deep/out"
	if s := b.runToEnd("r1", spec); s.DoneObjects != 1 {
		t.Fatalf("run: %+v", s)
	}
	for range 2 { // the second GET takes the remembered node
		resp, body := a.request(http.MethodGet, a.objectURL("new/deep/out/x"), nil)
		if resp.code != http.StatusOK || string(body) != "object raw/x|t:" || resp.header.Get(wire.HeaderNode) != "node-b" {
			t.Fatalf("GET of a run's output through node-a: %d %q from %q", resp.code, body, resp.header.Get(wire.HeaderNode))
		}
	}
	// The remembered node lost it: forgotten, and no node has it.
	if err := os.Remove(filepath.Join(b.root, "new/deep/out/x")); err != nil {
		t.Fatal(err)
	}
	if resp, _ := a.request(http.MethodGet, a.objectURL("new/deep/out/x"), nil); resp.code != http.StatusNotFound {
		t.Errorf("GET after the holder lost it: %d", resp.code)
	}
	if _, ok := a.agent.located.get("default/new/deep/out/x"); ok {
		t.Error("a location found wrong is still remembered")
	}
}

// A caller that goes away mid-PUT leaves nothing on the node the PUT was
// forwarded to either.
func TestForwardedPutClientGone(t *testing.T) {
	a, b := newPair(t, nil)
	putAndHangUp(t, a, "?node=node-b", b.base)
}
