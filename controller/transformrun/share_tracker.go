package transformrun

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// trackedRun is what this manager tracks of a run's shares between polls, beyond what the run's
// status holds: when it last wrote the status (to bound the write rate and measure the rate of
// work), the exact time each node's agent last answered (status, written at a bounded rate and to
// the second, may hold an older answer, which would shorten the grace period), and the UID and
// nodes of the shares, to stop them once the run is deleted (it has no finalizer, so its object
// is gone by then). It also holds when it last polled the run and each node's processed objects
// then: their rate since, the most recent there is, tells when a share should end.
type trackedRun struct {
	uid       types.UID
	nodes     []string
	seen      map[string]time.Time
	wrote     time.Time
	polled    time.Time
	processed map[string]int64
}

// shareTracker holds the trackedRun of every run this manager polls. It lives in memory only:
// nothing in it is needed for a run to be correct, only to be exact and tidy. A manager that
// restarts, or a replica that takes over the lease, starts with it empty: its first poll of each
// run writes the status at once and keeps the rate that status holds (sinceWrite unknown), a
// silent agent's grace period runs from the last answer status holds (up to a status interval
// earlier), and a run deleted before that first poll keeps its shares running to their end, unless
// a new run of its name meets them (the agent refuses its PUT with 409, and the reconciler stops
// the orphan).
type shareTracker struct {
	mu   sync.Mutex
	runs map[types.NamespacedName]trackedRun
}

func (m *shareTracker) lookup(key types.NamespacedName) (trackedRun, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[key]
	return r, ok
}

// record tracks the run's UID, its nodes and their agents' last answers after a poll, and now as
// its last status write if wrote.
func (m *shareTracker) record(key types.NamespacedName, uid types.UID, nodes []v1alpha1.RunNodeStatus, wrote bool, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[types.NamespacedName]trackedRun{}
	}
	r := m.runs[key]
	if r.uid != uid {
		r = trackedRun{uid: uid}
	}
	// Status holds times to the second; the later time this manager saw stands.
	seen := map[string]time.Time{}
	r.nodes = make([]string, len(nodes))
	r.polled, r.processed = now, make(map[string]int64, len(nodes))
	for i, n := range nodes {
		r.nodes[i] = n.Node
		r.processed[n.Node], _ = processed(n.RunCounts)
		seen[n.Node] = r.seen[n.Node]
		if n.LastSeen != nil && n.LastSeen.After(seen[n.Node]) {
			seen[n.Node] = n.LastSeen.Time
		}
	}
	r.seen = seen
	if wrote {
		r.wrote = now
	}
	m.runs[key] = r
}

func (m *shareTracker) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, key)
}

// sinceWrite is how long ago the run's status was written by this manager, 0 when unknown.
func (r trackedRun) sinceWrite(uid types.UID, now time.Time) time.Duration {
	if r.uid != uid || r.wrote.IsZero() {
		return 0
	}
	return now.Sub(r.wrote)
}

// ratesSince are the objects per second each of nodes processed since this manager's last poll of
// run uid, by node; none when it has not polled the run.
func (r trackedRun) ratesSince(uid types.UID, nodes []v1alpha1.RunNodeStatus, now time.Time) map[string]float64 {
	secs := now.Sub(r.polled).Seconds()
	if r.uid != uid || r.polled.IsZero() || secs <= 0 {
		return nil
	}
	rates := map[string]float64{}
	for _, n := range nodes {
		if before, ok := r.processed[n.Node]; ok {
			o, _ := processed(n.RunCounts)
			rates[n.Node] = float64(max(o-before, 0)) / secs
		}
	}
	return rates
}

// lastSeen is when the node's agent last answered about run uid, as far as this manager saw.
func (r trackedRun) lastSeen(uid types.UID, node string) time.Time {
	if r.uid != uid {
		return time.Time{}
	}
	return r.seen[node]
}
