// Package fairshare divides a node-wide cap of the node agent (client
// streams, inline requests, offline runs, their workers) among the
// namespaces that want it, so that no namespace takes the whole node while
// others wait.
//
// The policy, in one line: a namespace may hold at most
// max(1, ceil(Max / N)), where N counts the namespaces that hold some of
// the cap now or were refused some within the last Waiting, the asking one
// included; and all namespaces together at most Max.
//
//   - Work-conserving: a namespace alone may take the whole node (N = 1).
//   - A Cap's requests are refused (429), never queued, so "others wait" means
//     "were refused lately": a refused namespace counts for Waiting after
//     its last refusal, the time its clients (the manager polls runs every
//     few seconds) take to ask again. Meanwhile the others' shares shrink,
//     and what they give back is left for it rather than taken again.
//   - Nothing is taken back: a namespace above its share (it took the
//     node while alone) keeps what it holds and gets no more until it is
//     under its share again.
//
// A Queue is the same idea for work already under way that should wait
// rather than fail: its askers wait, and a slot given back goes to the
// waiting namespace that holds the fewest.
package fairshare

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/mlkube/mlkube/internal/status"
)

// Waiting is how long a refused namespace counts among those that want a
// cap: longer than the manager's poll of runs (3 s) and a client's retry
// after a 429.
const Waiting = 10 * time.Second

// maxWaiting bounds the namespaces remembered as waiting (each a DNS label
// of at most 63 bytes and a time). Past it a refusal is not remembered; the
// refusal stands, and its namespace counts again once it holds some.
const maxWaiting = 4096

// Cap is one node-wide cap, shared fairly among namespaces. Its zero value
// is not usable: set What, Flag and Max.
type Cap struct {
	// What is counted ("streams") and Flag the agent's flag that sets Max,
	// both named in a refusal; Hint, when set, ends it (what else to do
	// than retry).
	What, Flag, Hint string
	Max              int
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	mu sync.Mutex
	// held has the namespaces that hold some, at most Max of them; waiting
	// the ones refused lately, with the time of their last refusal.
	held    holdings
	waiting map[string]time.Time
}

// Admit takes n for namespace ns, or fails with 429 naming the limit, its
// flag and, when the share was the limit, the namespaces it is shared
// among; Release gives them back.
func (c *Cap) Admit(ns string, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.forget(now)
	mine := c.held.by[ns]
	switch contenders := c.contenders(ns); {
	case c.held.total+n > c.Max:
		c.refused(ns, now)
		return c.full(n)
	case contenders > 1 && mine+n > share(c.Max, contenders):
		c.refused(ns, now)
		return status.With(http.StatusTooManyRequests, fmt.Errorf(
			"namespace %s holds %d of this node's %d %s (%s), and may hold %d while %d namespaces use or wait for them: its fair share; retry later%s",
			ns, mine, c.Max, c.What, c.Flag, share(c.Max, contenders), contenders, c.hint()))
	}
	c.held.take(ns, n)
	// Admitted: it waits no more.
	delete(c.waiting, ns)
	return nil
}

// Release gives back n that ns holds.
func (c *Cap) Release(ns string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held.give(ns, n)
}

// Held is what all namespaces hold now.
func (c *Cap) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held.total
}

// holdings counts what each namespace holds of a cap, and all of them
// together: the bookkeeping of a Cap and of a Queue.
type holdings struct {
	total int
	by    map[string]int // only namespaces that hold some
}

func (h *holdings) take(ns string, n int) {
	if h.by == nil {
		h.by = map[string]int{}
	}
	h.by[ns] += n
	h.total += n
}

func (h *holdings) give(ns string, n int) {
	h.total -= n
	if h.by[ns] -= n; h.by[ns] <= 0 {
		delete(h.by, ns)
	}
}

// share is a namespace's part of max among contenders.
func share(max, contenders int) int {
	return (max + contenders - 1) / contenders
}

// contenders counts the namespaces that hold some or wait, and ns.
func (c *Cap) contenders(ns string) int {
	n := len(c.held.by)
	for w := range c.waiting {
		if _, holds := c.held.by[w]; !holds && w != ns {
			n++
		}
	}
	if _, holds := c.held.by[ns]; !holds {
		n++
	}
	return n
}

func (c *Cap) refused(ns string, now time.Time) {
	if _, ok := c.waiting[ns]; !ok && len(c.waiting) >= maxWaiting {
		return
	}
	if c.waiting == nil {
		c.waiting = map[string]time.Time{}
	}
	c.waiting[ns] = now
}

// forget drops the namespaces that were refused longer than Waiting ago.
func (c *Cap) forget(now time.Time) {
	for ns, at := range c.waiting {
		if now.Sub(at) >= Waiting {
			delete(c.waiting, ns)
		}
	}
}

// full refuses n more on a node whose cap is all held.
func (c *Cap) full(n int) error {
	if n == 1 {
		return status.With(http.StatusTooManyRequests, fmt.Errorf(
			"this node already holds %d %s, its limit (%s); retry later%s", c.Max, c.What, c.Flag, c.hint()))
	}
	return status.With(http.StatusTooManyRequests, fmt.Errorf(
		"%d more %s would exceed this node's limit of %d (%s; %d in use); retry later%s", n, c.What, c.Max, c.Flag, c.held.total, c.hint()))
}

func (c *Cap) hint() string {
	if c.Hint == "" {
		return ""
	}
	return " or " + c.Hint
}

func (c *Cap) now() time.Time {
	if c.Now == nil {
		return time.Now()
	}
	return c.Now()
}
