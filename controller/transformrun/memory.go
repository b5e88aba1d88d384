package transformrun

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// remembered is what this manager keeps of a run it follows, and nothing a restart cannot lose:
// when it last wrote the run's status (to bound the write rate and measure the rate of work),
// and the UID and nodes of its shares, to stop them once the run is deleted.
type remembered struct {
	uid   types.UID
	nodes []string
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

// follow records the run's UID and nodes, and now as its last status write if wrote.
func (m *memory) follow(key types.NamespacedName, uid types.UID, nodes []string, wrote bool, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[types.NamespacedName]remembered{}
	}
	r := m.runs[key]
	if r.uid != uid {
		r = remembered{uid: uid}
	}
	r.nodes = slices.Clone(nodes)
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
