package agent

import (
	"sync"

	"github.com/mlkube/mlkube/internal/status"
)

// nodeLimits is the node-wide cap on client streams (docs/design/etl.md, "Who may use the data
// path"): each holds goroutines, buffers and transformer connections, so without a cap a few
// callers could take the whole node. The caps on offline runs are package noderun's.
type nodeLimits struct {
	maxStreams int

	mu      sync.Mutex
	streams int
}

// admitStream takes one stream, or fails with 429; releaseStream gives it
// back.
func (l *nodeLimits) admitStream() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams >= l.maxStreams {
		return status.TooMany("streams", l.maxStreams, "--max-streams")
	}
	l.streams++
	return nil
}

func (l *nodeLimits) releaseStream() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.streams--
}
