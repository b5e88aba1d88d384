package agent

import (
	"sync"

	"github.com/mlkube/mlkube/internal/status"
)

// nodeLimits are the node-wide caps on client streams and inline requests
// (docs/design/etl.md, "Who may use the data path"): each holds goroutines,
// buffers and transformer connections, so without a cap a few callers could
// take the whole node. The caps on offline runs are package noderun's.
type nodeLimits struct {
	streams, inline nodeCap
}

func newNodeLimits(o Options) nodeLimits {
	return nodeLimits{
		streams: nodeCap{what: "streams", flag: "--max-streams", max: o.MaxStreams},
		inline:  nodeCap{what: "inline requests", flag: "--max-inline-requests", max: o.MaxInlineRequests},
	}
}

// nodeCap counts what is held at once on the node, up to max. Whatever
// divides the node among callers (a share per namespace) belongs here,
// with the count.
type nodeCap struct {
	// what is counted and the flag that sets max, for the refusal.
	what, flag string
	max        int

	mu   sync.Mutex
	held int
}

// admit takes one, or fails with 429 naming the limit and its flag;
// release gives it back.
func (c *nodeCap) admit() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held >= c.max {
		return status.TooMany(c.what, c.max, c.flag)
	}
	c.held++
	return nil
}

func (c *nodeCap) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held--
}
