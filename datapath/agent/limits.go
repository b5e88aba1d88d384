package agent

import (
	"github.com/mlkube/mlkube/datapath/internal/fairshare"
)

// nodeLimits are the node-wide caps on client streams and inline requests
// (docs/design/etl.md, "Who may use the data path"): each holds goroutines,
// buffers and transformer connections, so without a cap a few callers could
// take the whole node, and each is shared fairly among the namespaces that
// want it (package fairshare). The caps on offline runs are package
// noderun's.
type nodeLimits struct {
	streams, inline *fairshare.Cap
}

func newNodeLimits(o Options) nodeLimits {
	return nodeLimits{
		streams: &fairshare.Cap{What: "streams", Flag: "--max-streams", Max: o.MaxStreams},
		inline:  &fairshare.Cap{What: "inline requests", Flag: "--max-inline-requests", Max: o.MaxInlineRequests},
	}
}
