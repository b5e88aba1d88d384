package fairshare

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"
)

func newQueue(max int) *Queue {
	return &Queue{What: "large puts", Flag: "--max-large-store-puts", Max: max}
}

// asked is one Acquire's outcome.
type asked struct {
	ns      string
	release func()
	err     error
}

// ask starts an Acquire for ns that must wait, and returns once it does: the waiters are in the
// order of the calls.
func ask(t *testing.T, ctx context.Context, q *Queue, ns string) <-chan asked {
	t.Helper()
	before := q.Waiting()
	got := make(chan asked, 1)
	go func() {
		release, err := q.Acquire(ctx, ns)
		got <- asked{ns, release, err}
	}()
	for deadline := time.Now().Add(time.Minute); q.Waiting() == before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s's Acquire never waited", ns)
		}
	}
	return got
}

// acquire takes a slot for ns that must be free.
func acquire(t *testing.T, q *Queue, ns string) func() {
	t.Helper()
	release, err := q.Acquire(context.Background(), ns)
	if err != nil {
		t.Fatalf("%s: %v", ns, err)
	}
	return release
}

// granted checks that a release handed its slot to ns's waiter got, before waiting for it: a
// release hands its slot on before it returns.
func granted(t *testing.T, q *Queue, holding map[string]int, got <-chan asked, ns string) func() {
	t.Helper()
	q.mu.Lock()
	now := maps.Clone(q.held.by)
	q.mu.Unlock()
	if !maps.Equal(now, holding) {
		t.Fatalf("namespaces hold %v, want %v: the slot given back went to the wrong waiter", now, holding)
	}
	a := <-got
	if a.err != nil || a.ns != ns {
		t.Fatalf("got %s's slot (%v), want %s's", a.ns, a.err, ns)
	}
	return a.release
}

// notYet checks that a waiting Acquire is still waiting.
func notYet(t *testing.T, got <-chan asked) {
	t.Helper()
	select {
	case a := <-got:
		t.Fatalf("%s got a slot (%v) while none was free for it", a.ns, a.err)
	default:
	}
}

// A namespace alone takes every slot without waiting; one more waits for a slot to be given back.
func TestQueueAloneTakesEverySlot(t *testing.T) {
	q := newQueue(2)
	first := acquire(t, q, "a")
	acquire(t, q, "a")
	third := ask(t, context.Background(), q, "a")
	notYet(t, third)
	first()
	first() // a second call gives nothing back twice
	granted(t, q, map[string]int{"a": 2}, third, "a")
	if q.Held() != 2 || q.Waiting() != 0 {
		t.Errorf("held %d, waiting %d; want 2 held, none waiting", q.Held(), q.Waiting())
	}
}

// A's waiters queued first, but a slot given back goes to B, which holds none; then A and B take
// turns by what they hold, each namespace's own waiters in their order.
func TestQueueFreedSlotGoesToTheNamespaceHoldingFewest(t *testing.T) {
	q := newQueue(2)
	ctx := context.Background()
	a1, a2 := acquire(t, q, "a"), acquire(t, q, "a")
	a3 := ask(t, ctx, q, "a")
	a4 := ask(t, ctx, q, "a")
	b1 := ask(t, ctx, q, "b")
	b2 := ask(t, ctx, q, "b")

	a1()
	b1r := granted(t, q, map[string]int{"a": 1, "b": 1}, b1, "b") // a held 1, b none
	notYet(t, a3)
	a2()
	granted(t, q, map[string]int{"a": 1, "b": 1}, a3, "a") // a held none, b 1: a's first waiter
	notYet(t, b2)
	b1r()
	granted(t, q, map[string]int{"a": 1, "b": 1}, b2, "b") // a held 1, b none
	notYet(t, a4)
	if q.Held() != 2 || q.Waiting() != 1 {
		t.Errorf("held %d, waiting %d; want 2 held, a4 waiting", q.Held(), q.Waiting())
	}
}

// A waiter whose context ends gives up with an error that names its namespace, the cap, its flag
// and the cause, and leaves no slot behind.
func TestQueueGivesUpWithTheCause(t *testing.T) {
	q := newQueue(1)
	release := acquire(t, q, "a")
	ctx, cancel := context.WithCancelCause(context.Background())
	got := ask(t, ctx, q, "b")
	cancel(errors.New("the object's timeout passed"))
	a := <-got
	if a.err == nil {
		t.Fatal("Acquire succeeded after its context ended, with the only slot held")
	}
	for _, s := range []string{"namespace b", "this node's 1 large puts", "--max-large-store-puts", "the object's timeout passed"} {
		if !strings.Contains(a.err.Error(), s) {
			t.Errorf("%q does not say %q", a.err, s)
		}
	}
	if q.Waiting() != 0 {
		t.Errorf("%d waiting after the only waiter gave up", q.Waiting())
	}
	release()
	if q.Held() != 0 {
		t.Errorf("held %d after every slot was given back", q.Held())
	}
	acquire(t, q, "c")
}
