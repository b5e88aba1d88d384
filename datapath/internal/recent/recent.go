// Package recent keeps the most recent per-object errors of a Transform (the
// agent's stats) or of a node run (its status), as many as a status shows.
package recent

import (
	"sync"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// Errors is a ring of the most recent per-object errors; its zero value is
// empty and ready.
type Errors struct {
	mu sync.Mutex
	// next is where the next error goes; full says the ring has wrapped.
	ring [etlv1alpha1.MaxObjectErrors]etlv1alpha1.ObjectError
	next int
	full bool
}

// Add keeps e, cut to what a status holds, in place of the oldest error
// once the ring is full.
func (r *Errors) Add(e etlv1alpha1.ObjectError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ring[r.next] = e.Truncated()
	r.next = (r.next + 1) % len(r.ring)
	r.full = r.full || r.next == 0
}

// Snapshot returns the errors, oldest first.
func (r *Errors) Snapshot() []etlv1alpha1.ObjectError {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []etlv1alpha1.ObjectError
	if r.full {
		out = append(out, r.ring[r.next:]...)
	}
	return append(out, r.ring[:r.next]...)
}
