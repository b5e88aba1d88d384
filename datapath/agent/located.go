package agent

import "sync"

// locations remembers which node holds an object this node does not, so that
// only the first read asks the nodes in turn. Bounded: when full, an
// arbitrary eighth goes (Go's map order). An entry found wrong (404 from its
// node) is forgotten.
type locations struct {
	max int

	mu    sync.RWMutex
	nodes map[string]string
}

func (l *locations) get(key string) (string, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	n, ok := l.nodes[key]
	return n, ok
}

func (l *locations) put(key, node string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.nodes == nil {
		l.nodes = make(map[string]string)
	}
	if len(l.nodes) >= l.max {
		for k := range l.nodes {
			if len(l.nodes) < l.max-l.max/8 {
				break
			}
			delete(l.nodes, k)
		}
	}
	l.nodes[key] = node
}

func (l *locations) forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.nodes, key)
}
