package agent

import (
	"fmt"
	"net/http"
	"sync"
)

// nodeLimits are the node-wide caps on what clients may hold at once
// (docs/design/etl.md, "Who may use the data path"): each offline run and each
// stream holds goroutines, buffers and transformer connections, so without
// a cap a few callers could take the whole node.
type nodeLimits struct {
	maxRuns, maxWorkers, maxStreams int

	mu            sync.Mutex
	runs, workers int
	streams       int
}

// errTooMany answers a request past a node-wide cap with 429.
func errTooMany(what string, limit int, option string) error {
	return withStatus(http.StatusTooManyRequests, fmt.Errorf(
		"this node already holds %d %s, its limit (%s); retry later", limit, what, option))
}

// admitRun takes a run's share (one run, its workers), or fails with 429;
// releaseRun gives it back.
func (l *nodeLimits) admitRun(workers int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.runs >= l.maxRuns:
		return errTooMany("concurrent offline runs", l.maxRuns, "--max-offline-runs")
	case l.workers+workers > l.maxWorkers:
		return withStatus(http.StatusTooManyRequests, fmt.Errorf(
			"%d more offline workers would exceed this node's limit of %d (--max-offline-workers; %d in use); retry later or ask for fewer workers",
			workers, l.maxWorkers, l.workers))
	}
	l.runs++
	l.workers += workers
	return nil
}

func (l *nodeLimits) releaseRun(workers int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs--
	l.workers -= workers
}

// admitStream takes one stream, or fails with 429; releaseStream gives it
// back.
func (l *nodeLimits) admitStream() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams >= l.maxStreams {
		return errTooMany("streams", l.maxStreams, "--max-streams")
	}
	l.streams++
	return nil
}

func (l *nodeLimits) releaseStream() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.streams--
}
