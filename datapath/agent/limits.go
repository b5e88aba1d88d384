package agent

import (
	"fmt"

	"github.com/mlkube/mlkube/datapath/internal/fairshare"
	"github.com/mlkube/mlkube/internal/objectstore"
)

// nodeLimits are the node-wide caps on client streams and inline requests
// (docs/design/etl.md, "Who may use the data path"): each holds goroutines,
// buffers and transformer connections, so without a cap a few callers could
// take the whole node, and each is shared fairly among the namespaces that
// want it (package fairshare). The caps on offline runs are package
// noderun's; their large results going up to stores wait for largePuts,
// shared fairly too, where a refusal would fail an object already
// transformed.
type nodeLimits struct {
	streams, inline *fairshare.Cap
	largePuts       *fairshare.Queue
}

func newNodeLimits(o Options) nodeLimits {
	return nodeLimits{
		streams: &fairshare.Cap{What: "streams", Flag: "--max-streams", Max: o.MaxStreams},
		inline:  &fairshare.Cap{What: "inline requests", Flag: "--max-inline-requests", Max: o.MaxInlineRequests},
		largePuts: &fairshare.Queue{
			What: fmt.Sprintf("puts of results over %d MiB to object stores", objectstore.HeadSize>>20),
			Flag: "--max-large-store-puts", Max: o.MaxLargeStorePuts,
		},
	}
}
