package transformrun

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// remembered is what this manager keeps of a run it follows, and nothing a restart cannot lose:
// when it last wrote the run's status (to bound the write rate and measure the rate of work),
// when each node's agent last answered (status, written at a bounded rate, may hold an older
// answer, which would shorten the grace period), and the UID and nodes of its shares, to stop
// them once the run is deleted.
type remembered struct {
	uid   types.UID
	nodes []string
	seen  map[string]time.Time
	wrote time.Time
}

// memory holds what this manager remembers of each run it follows.
type memory struct {
	mu   sync.Mutex
	runs map[types.NamespacedName]remembered
}

func (m *memory) get(key types.NamespacedName) (remembered, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[key]
	return r, ok
}

// follow records the run's UID, its nodes and their agents' last answers, and now as its last
// status write if wrote.
func (m *memory) follow(key types.NamespacedName, uid types.UID, nodes []v1alpha1.RunNodeStatus, wrote bool, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[types.NamespacedName]remembered{}
	}
	r := m.runs[key]
	if r.uid != uid {
		r = remembered{uid: uid}
	}
	// Status holds times to the second; the later time this manager saw stands.
	seen := map[string]time.Time{}
	r.nodes = make([]string, len(nodes))
	for i, n := range nodes {
		r.nodes[i] = n.Node
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

func (m *memory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, key)
}

// sinceWrite is how long ago the run's status was written by this manager, 0 when unknown.
func (r remembered) sinceWrite(uid types.UID, now time.Time) time.Duration {
	if r.uid != uid || r.wrote.IsZero() {
		return 0
	}
	return now.Sub(r.wrote)
}

// lastSeen is when the node's agent last answered about run uid, as far as this manager saw.
func (r remembered) lastSeen(uid types.UID, node string) time.Time {
	if r.uid != uid {
		return time.Time{}
	}
	return r.seen[node]
}
