package agent

import (
	"sync"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// errorRing keeps the most recent per-object errors, as many as status
// shows.
type errorRing struct {
	mu sync.Mutex
	// next is where the next error goes; full says the ring has wrapped.
	ring [etlv1alpha1.MaxObjectErrors]etlv1alpha1.ObjectError
	next int
	full bool
}

func (r *errorRing) add(e etlv1alpha1.ObjectError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ring[r.next] = e.Truncated()
	r.next = (r.next + 1) % len(r.ring)
	r.full = r.full || r.next == 0
}

// snapshot returns the errors, oldest first.
func (r *errorRing) snapshot() []etlv1alpha1.ObjectError {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []etlv1alpha1.ObjectError
	if r.full {
		out = append(out, r.ring[r.next:]...)
	}
	return append(out, r.ring[:r.next]...)
}
