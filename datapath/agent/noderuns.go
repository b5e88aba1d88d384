package agent

import (
	"sync"
)

// keptRuns is how many runs an agent remembers; the oldest ended ones are
// forgotten first. A forgotten run answers 404, and the manager's next PUT
// finds its journal.
const keptRuns = 64

// nodeRuns holds the agent's runs, the latest attempt of each by key.
type nodeRuns struct {
	// starting serializes PUTs, which check and take destinations.
	starting sync.Mutex

	mu    sync.Mutex
	runs  map[runKey]*nodeRun
	order []runKey // oldest first
}

func (rs *nodeRuns) get(k runKey) *nodeRun {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.runs[k]
}

// put makes r the run of its key, forgetting the oldest ended runs past
// keptRuns.
func (rs *nodeRuns) put(r *nodeRun) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.runs == nil {
		rs.runs = map[runKey]*nodeRun{}
	}
	if _, ok := rs.runs[r.key]; !ok {
		rs.order = append(rs.order, r.key)
	}
	rs.runs[r.key] = r
	for i := 0; len(rs.order) > keptRuns && i < len(rs.order); {
		if k := rs.order[i]; rs.runs[k].ended() {
			delete(rs.runs, k)
			rs.order = append(rs.order[:i], rs.order[i+1:]...)
			continue
		}
		i++
	}
}

// closeAll abandons every run, as the agent closes, and waits until their
// workers let go of the destinations: a run's objects in flight are
// cancelled and redone when the run resumes.
func (rs *nodeRuns) closeAll() {
	rs.mu.Lock()
	runs := make([]*nodeRun, 0, len(rs.runs))
	for _, r := range rs.runs {
		runs = append(runs, r)
	}
	rs.mu.Unlock()
	for _, r := range runs {
		r.cancel()
	}
	for _, r := range runs {
		<-r.done
	}
}
