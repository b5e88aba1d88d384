package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/panics"
	"github.com/mlkube/mlkube/datapath/internal/placement"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/status"
)

// Peer is a node whose agent is ready, and the base URL it answers at.
type Peer struct {
	Node, URL string
}

// Peers knows which nodes' agents are ready (EndpointSlicePeers).
type Peers interface {
	Ready(ctx context.Context) ([]Peer, error)
}

// checkPeer accepts a forwarded request only from a peer agent: its
// wire.HeaderForwardedBy must be a token of the agents' ServiceAccount.
func (a *Agent) checkPeer(r *http.Request) error {
	c, err := a.opts.Access.Authenticate(r.Context(), r.Header.Get(wire.HeaderForwardedBy))
	if err != nil {
		return status.With(access.Status(err), fmt.Errorf("forwarded request: the forwarding agent's token (%s): %w", wire.HeaderForwardedBy, err))
	}
	if c.Name != a.opts.PeerServiceAccount {
		return status.With(http.StatusForbidden, fmt.Errorf("forwarded request from %s, not from the node agents' ServiceAccount %s (--peer-service-account); only agents forward", c.Name, a.opts.PeerServiceAccount))
	}
	return nil
}

// serveSpread answers a request of a caller (not a peer) over every ready
// node: a PUT goes where placement puts the object, a read or delete goes to
// the node that holds it, a list merges every node's.
func (a *Agent) serveSpread(w http.ResponseWriter, r *http.Request, p objectPath) {
	peers, err := a.opts.Peers.Ready(r.Context())
	if err != nil {
		a.failObject(w, p, status.With(http.StatusServiceUnavailable, fmt.Errorf("the ready node agents: %w", err)))
		return
	}
	if node := r.URL.Query().Get(wire.QueryNode); node != "" {
		a.serveOn(w, r, p, peers, node)
		return
	}
	switch {
	case p.object == "":
		err = a.listAll(w, r, p, peers)
	case r.Method == http.MethodPut && len(peers) > 0:
		a.serveOn(w, r, p, peers, placement.Rank(p.namespace, p.object, nodesOf(peers))[0])
		return
	case r.Method == http.MethodPut:
		a.serveLocal(w, r, p) // no agent is ready yet, this one included: keep it here
		return
	case r.Method == http.MethodDelete && r.URL.Query().Get(wire.QueryRecursive) == "true":
		err = a.deleteAll(w, r, p, peers)
	default:
		// This node first: most reads are of objects placed here.
		if err = a.answerLocal(w, r, p); status.Of(err) == http.StatusNotFound {
			err = a.serveFound(w, r, p, peers)
		}
	}
	if err != nil {
		a.failObject(w, p, err)
	}
}

// serveOn answers from node: this one, or a ready peer.
func (a *Agent) serveOn(w http.ResponseWriter, r *http.Request, p objectPath, peers []Peer, node string) {
	if node == a.opts.Node {
		a.serveLocal(w, r, p)
		return
	}
	i := slices.IndexFunc(peers, func(x Peer) bool { return x.Node == node })
	if i < 0 {
		a.failObject(w, p, status.NotFound(fmt.Errorf("node %q has no ready agent; ready nodes: %s", node, strings.Join(nodesOf(peers), ", "))))
		return
	}
	resp, err := a.send(r, peers[i], r.Method, r.URL.RawQuery)
	if err != nil {
		a.failObject(w, p, err)
		return
	}
	relay(w, resp)
}

func nodesOf(peers []Peer) []string {
	nodes := make([]string, len(peers))
	for i, x := range peers {
		nodes[i] = x.Node
	}
	return nodes
}

// serveFound answers a GET, HEAD or DELETE of an object this node does not
// hold from the node that does: the one remembered for it, else the first in
// placement order whose agent answers a HEAD. 404 only when none holds it.
func (a *Agent) serveFound(w http.ResponseWriter, r *http.Request, p objectPath, peers []Peer) error {
	key := p.namespace + "/" + p.object
	if node, ok := a.located.get(key); ok {
		if i := slices.IndexFunc(peers, func(x Peer) bool { return x.Node == node }); i >= 0 {
			resp, err := a.send(r, peers[i], r.Method, r.URL.RawQuery)
			if err == nil && resp.StatusCode != http.StatusNotFound {
				relay(w, resp)
				return nil
			}
			if err == nil {
				resp.Body.Close()
			}
		}
		a.located.forget(key)
	}
	var unreachable []string
	for _, node := range placement.Rank(p.namespace, p.object, nodesOf(peers)) {
		if node == a.opts.Node {
			continue
		}
		peer := peers[slices.IndexFunc(peers, func(x Peer) bool { return x.Node == node })]
		resp, err := a.send(r, peer, http.MethodHead, "")
		if err != nil {
			unreachable = append(unreachable, node)
			continue
		}
		if resp.StatusCode == http.StatusNotFound {
			resp.Body.Close()
			continue
		}
		if resp.StatusCode == http.StatusOK {
			a.located.put(key, node)
		}
		if r.Method == http.MethodHead || resp.StatusCode != http.StatusOK {
			relay(w, resp)
			return nil
		}
		resp.Body.Close()
		if resp, err = a.send(r, peer, r.Method, r.URL.RawQuery); err != nil {
			return err
		}
		relay(w, resp)
		return nil
	}
	if len(unreachable) > 0 {
		return status.With(http.StatusServiceUnavailable, fmt.Errorf("object %q is on no node that answered; the agents of %s did not answer, retry", p.object, strings.Join(unreachable, ", ")))
	}
	return status.NotFound(fmt.Errorf("object %q not found on any of the %d ready nodes", p.object, len(peers)))
}

// send sends r to peer's agent as a forwarded request with method and query:
// the caller's token travels unchanged, this agent's own token says it is a
// peer, and a PUT's body streams through.
func (a *Agent) send(r *http.Request, peer Peer, method, query string) (*http.Response, error) {
	token, err := a.peerToken.get()
	if err != nil {
		return nil, status.With(http.StatusServiceUnavailable, fmt.Errorf("cannot reach node %s: this agent's own data path token: %w", peer.Node, err))
	}
	u := peer.URL + r.URL.EscapedPath()
	if query != "" {
		u += "?" + query
	}
	var body io.Reader
	if method == http.MethodPut {
		body = r.Body
	}
	out, err := http.NewRequestWithContext(r.Context(), method, u, body)
	if err != nil {
		return nil, status.BadRequest(err)
	}
	if method == http.MethodPut {
		out.ContentLength = r.ContentLength
	}
	for _, h := range forwardedHeaders {
		if v := r.Header.Values(h); len(v) > 0 && (method != http.MethodHead || h == "Authorization") {
			out.Header[h] = v
		}
	}
	out.Header.Set(wire.HeaderForwardedBy, token)
	resp, err := a.peers.Do(out)
	if err != nil {
		return nil, status.With(http.StatusBadGateway, fmt.Errorf("node %s's agent at %s: %w", peer.Node, peer.URL, err))
	}
	return resp, nil
}

// forwardedHeaders are the caller's headers a forwarded request carries.
var forwardedHeaders = []string{
	"Authorization", "Content-Type", "Range", "If-Range", "If-Match", "If-None-Match",
	"If-Modified-Since", "If-Unmodified-Since", wire.HeaderChecksum,
}

// relay streams a peer's answer to the caller through a pooled buffer.
func relay(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	buf := bufpool.Objects.Get()
	defer bufpool.Objects.Put(buf)
	// The status is sent: a caller or peer that goes away now can only be
	// cut off, which the short body tells the caller.
	_, _ = bufpool.Copy(w, resp.Body, *buf)
}

// listAll merges the pages of every ready node, asked at once.
func (a *Agent) listAll(w http.ResponseWriter, r *http.Request, p objectPath, peers []Peer) error {
	q, err := parseListQuery(r.URL.Query())
	if err != nil {
		return status.BadRequest(err)
	}
	pages := make([]wire.ObjectList, len(peers)+1)
	err = a.onEveryNode(peers, func() (err error) {
		pages[0], err = a.objects.list(p.namespace, q)
		return err
	}, func(i int, peer Peer) (err error) {
		pages[i+1], err = a.peerPage(r, peer, q)
		return err
	})
	if err != nil {
		return err
	}
	b := pageBuilder{q: q}
	for _, l := range pages {
		b.addPage(l)
	}
	writeJSON(w, http.StatusOK, b.page())
	return nil
}

// onEveryNode runs local, and remote for each peer but this node, all at
// once, and returns their errors.
func (a *Agent) onEveryNode(peers []Peer, local func() error, remote func(int, Peer) error) error {
	errs := make([]error, len(peers)+1)
	var wg sync.WaitGroup
	run := func(i int, f func() error) {
		wg.Add(1)
		a.panics.GoSafe("object API fan-out", func() {
			defer wg.Done()
			errs[i] = panics.ErrInternal // what a panic of f leaves
			errs[i] = f()
		})
	}
	run(0, local)
	for i, peer := range peers {
		if peer.Node != a.opts.Node {
			run(i+1, func() error { return remote(i, peer) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// peerPage asks peer for its page of q. A node that cannot answer fails the
// list: a list without its objects would say they do not exist.
func (a *Agent) peerPage(r *http.Request, peer Peer, q listQuery) (wire.ObjectList, error) {
	resp, err := a.send(r, peer, http.MethodGet, q.encode())
	if err != nil {
		return wire.ObjectList{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return wire.ObjectList{}, peerError(peer, resp)
	}
	var l wire.ObjectList
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxPeerAnswer)).Decode(&l); err != nil {
		return wire.ObjectList{}, status.With(http.StatusBadGateway, fmt.Errorf("node %s's list: %w", peer.Node, err))
	}
	return l, nil
}

// maxPeerAnswer bounds a peer's list page or error: a full page of the
// longest names, with room to spare.
const maxPeerAnswer = 8 << 20

// peerError is a peer's refusal, with its status and message.
func peerError(peer Peer, resp *http.Response) error {
	var e Error
	_ = json.NewDecoder(io.LimitReader(resp.Body, maxPeerAnswer)).Decode(&e) // the status says enough without it
	return status.With(resp.StatusCode, fmt.Errorf("node %s: %s", peer.Node, e.Error))
}

// deleteAll removes the objects under a prefix on every ready node at once.
func (a *Agent) deleteAll(w http.ResponseWriter, r *http.Request, p objectPath, peers []Peer) error {
	counts := make([]int, len(peers)+1)
	err := a.onEveryNode(peers, func() (err error) {
		counts[0], err = a.objects.remove(p.namespace, p.object, true)
		if status.Of(err) == http.StatusNotFound {
			err = nil
		}
		return err
	}, func(i int, peer Peer) error {
		resp, err := a.send(r, peer, http.MethodDelete, r.URL.RawQuery)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusNotFound:
			return nil
		case http.StatusOK:
			var d deleted
			err := json.NewDecoder(io.LimitReader(resp.Body, maxPeerAnswer)).Decode(&d)
			counts[i+1] = d.Deleted
			return err
		}
		return peerError(peer, resp)
	})
	if err != nil {
		return err
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return status.NotFound(fmt.Errorf("no object under %q on any of the %d ready nodes", p.object, len(peers)))
	}
	w.Header().Set(wire.HeaderNode, a.opts.Node)
	writeJSON(w, http.StatusOK, deleted{Deleted: n})
	return nil
}
