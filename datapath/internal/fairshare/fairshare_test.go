package fairshare

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/internal/status"
)

// clock is a test's time, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newCap(max int) (*Cap, *clock) {
	clk := &clock{t: time.Unix(1e9, 0)}
	return &Cap{What: "streams", Flag: "--max-streams", Max: max, Now: clk.now}, clk
}

// admitN admits n one at a time for ns, each of which must succeed.
func admitN(t *testing.T, c *Cap, ns string, n int) {
	t.Helper()
	for i := range n {
		if err := c.Admit(ns, 1); err != nil {
			t.Fatalf("%s's admission %d: %v", ns, i+1, err)
		}
	}
}

// wantRefused checks a 429 that says each of says.
func wantRefused(t *testing.T, err error, says ...string) {
	t.Helper()
	if status.Of(err) != http.StatusTooManyRequests {
		t.Fatalf("got %v, want 429", err)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal %q does not say %q", err, s)
		}
	}
}

// TestAloneTakesTheNode: a namespace alone may hold the whole cap, and
// not one more.
func TestAloneTakesTheNode(t *testing.T) {
	c, _ := newCap(4)
	admitN(t, c, "a", 4)
	wantRefused(t, c.Admit("a", 1), "this node already holds 4 streams", "--max-streams", "retry later")
}

// TestShareWhileOthersWait: A holds the whole node; B, refused, counts as
// waiting, so A cannot take back what it gives up beyond its share, and
// B gets it; once B is gone and its wait is over, A may take the node
// again.
func TestShareWhileOthersWait(t *testing.T) {
	c, clk := newCap(4)
	admitN(t, c, "a", 4)
	wantRefused(t, c.Admit("b", 1), "--max-streams")
	c.Release("a", 1)
	wantRefused(t, c.Admit("a", 1), "namespace a holds 3", "this node's 4 streams (--max-streams)", "may hold 2 while 2 namespaces", "retry later")
	if err := c.Admit("b", 1); err != nil {
		t.Fatalf("B, under its share, after A released one: %v", err)
	}
	// B holds now: A stays refused while it is over its share.
	c.Release("a", 1)
	wantRefused(t, c.Admit("a", 1), "namespace a holds 2")
	admitN(t, c, "b", 1)
	wantRefused(t, c.Admit("b", 1), "this node already holds 4")
	// Releases restore: B leaves, and once its wait is over A is alone.
	c.Release("b", 2)
	clk.t = clk.t.Add(Waiting)
	admitN(t, c, "a", 2)
	if c.Held() != 4 {
		t.Errorf("held %d, want 4", c.Held())
	}
}

// TestWaitLasts: a refused namespace counts as waiting for Waiting after
// its last refusal, not longer.
func TestWaitLasts(t *testing.T) {
	c, clk := newCap(2)
	admitN(t, c, "a", 2)
	wantRefused(t, c.Admit("b", 1))
	c.Release("a", 2)
	clk.t = clk.t.Add(Waiting - time.Second)
	admitN(t, c, "a", 1)
	wantRefused(t, c.Admit("a", 1), "may hold 1 while 2 namespaces")
	clk.t = clk.t.Add(time.Second)
	admitN(t, c, "a", 1)
}

// TestManyNamespaces: with more namespaces than the cap, each may hold one
// and all together the cap.
func TestManyNamespaces(t *testing.T) {
	c, _ := newCap(3)
	for i := range 3 {
		admitN(t, c, fmt.Sprint("ns", i), 1)
	}
	wantRefused(t, c.Admit("ns3", 1), "this node already holds 3")
	c.Release("ns0", 1)
	wantRefused(t, c.Admit("ns1", 1), "namespace ns1 holds 1", "may hold 1 while 3 namespaces")
	admitN(t, c, "ns3", 1)
}

// TestAdmitSeveral: a run's workers are admitted together, within the
// node's cap and the namespace's share, naming the hint.
func TestAdmitSeveral(t *testing.T) {
	clk := &clock{t: time.Unix(1e9, 0)}
	c := &Cap{What: "offline workers", Flag: "--max-offline-workers", Hint: "ask for fewer workers", Max: 8, Now: clk.now}
	if err := c.Admit("a", 6); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, c.Admit("b", 4), "4 more offline workers would exceed this node's limit of 8 (--max-offline-workers; 6 in use)", "or ask for fewer workers")
	c.Release("a", 6)
	wantRefused(t, c.Admit("a", 5), "namespace a holds 0", "may hold 4 while 2 namespaces", "or ask for fewer workers")
	if err := c.Admit("b", 4); err != nil {
		t.Fatalf("B within its share: %v", err)
	}
	if err := c.Admit("a", 4); err != nil {
		t.Fatalf("A within its share: %v", err)
	}
}

// TestWaitingBounded: the namespaces remembered as waiting are bounded;
// past the bound a refusal still stands.
func TestWaitingBounded(t *testing.T) {
	c, _ := newCap(1)
	admitN(t, c, "a", 1)
	for i := range maxWaiting + 10 {
		wantRefused(t, c.Admit(fmt.Sprint("w", i), 1))
	}
	if len(c.waiting) != maxWaiting {
		t.Errorf("%d namespaces remembered waiting, want at most %d", len(c.waiting), maxWaiting)
	}
}
