package fairshare

import (
	"context"
	"fmt"
	"sync"
)

// Queue is a node-wide cap whose askers wait rather than being refused:
// for work that is already under way, such as a run's result going up to a
// store, where a 429 would only fail the object. Waiting is fair among
// namespaces: a slot given back goes to the waiting namespace that holds
// the fewest, the one that asked first among equals. So a namespace that
// took every slot while alone gets the next one only after each other
// waiting namespace has as many as it has, and no namespace's results wait
// behind a queue another namespace filled. Its zero value is not usable:
// set What, Flag and Max.
type Queue struct {
	// What is counted and Flag the agent's flag that sets Max, both named
	// when an asker gives up waiting.
	What, Flag string
	Max        int

	mu      sync.Mutex
	held    holdings
	waiters []*waiter // in the order they asked
}

type waiter struct {
	ns      string
	granted chan struct{} // closed once the slot is the waiter's
}

// Acquire takes a slot for namespace ns, waiting for one as long as ctx
// lets it; release gives it back. The error names the cap, its flag and
// the cause of ctx.
func (q *Queue) Acquire(ctx context.Context, ns string) (release func(), err error) {
	q.mu.Lock()
	if q.held.total < q.Max && len(q.waiters) == 0 {
		q.held.take(ns, 1)
		q.mu.Unlock()
		return q.releaser(ns), nil
	}
	w := &waiter{ns: ns, granted: make(chan struct{})}
	q.waiters = append(q.waiters, w)
	q.mu.Unlock()

	select {
	case <-w.granted:
		return q.releaser(ns), nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	granted := !q.drop(w)
	q.mu.Unlock()
	if granted { // in the meantime: give it to the next
		q.releaser(ns)()
	}
	return nil, fmt.Errorf("namespace %s waited for one of this node's %d %s (%s), shared fairly among the namespaces that wait for them: %w",
		ns, q.Max, q.What, q.Flag, context.Cause(ctx))
}

// Waiting counts the askers waiting for a slot.
func (q *Queue) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiters)
}

// Held is what all namespaces hold now.
func (q *Queue) Held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.held.total
}

// releaser gives back ns's slot once, and hands the free slots to the
// waiters next in fair order.
func (q *Queue) releaser(ns string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.held.give(ns, 1)
			for q.held.total < q.Max && len(q.waiters) > 0 {
				w := q.waiters[next(q.waiters, q.held.by)]
				q.drop(w)
				q.held.take(w.ns, 1)
				close(w.granted)
			}
		})
	}
}

// next is the index of the waiter whose namespace holds the fewest slots,
// the first of them in waiters' order.
func next(waiters []*waiter, holders map[string]int) int {
	best := 0
	for i, w := range waiters {
		if holders[w.ns] < holders[waiters[best].ns] {
			best = i
		}
	}
	return best
}

// drop removes w from the waiters, reporting whether it was there (not
// granted a slot yet).
func (q *Queue) drop(w *waiter) bool {
	for i, x := range q.waiters {
		if x == w {
			copy(q.waiters[i:], q.waiters[i+1:])
			q.waiters[len(q.waiters)-1] = nil // no longer held by the backing array
			q.waiters = q.waiters[:len(q.waiters)-1]
			return true
		}
	}
	return false
}

// For is namespace ns's use of q, for what takes slots without knowing
// its namespace (a store client of ns's).
func (q *Queue) For(ns string) Namespace { return Namespace{q: q, ns: ns} }

// Namespace is one namespace's use of a Queue.
type Namespace struct {
	q  *Queue
	ns string
}

// Acquire takes a slot for the namespace (Queue.Acquire).
func (n Namespace) Acquire(ctx context.Context) (release func(), err error) {
	return n.q.Acquire(ctx, n.ns)
}
