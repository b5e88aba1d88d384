package agent

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// communicator moves one object to a transformer by one wire mechanism and
// returns the result as a stream, with its length or -1. A failure the
// transformer answered is a 502 carrying its message; closing the result
// releases everything the object used.
type communicator interface {
	transform(ctx context.Context, t Target, in input, exceeded *atomic.Bool) (result io.ReadCloser, size int64, err error)
}

// communicatorFor returns the communicator of c. io is hpush on the wire: a
// shim in the transformer pod serves the hpush contract.
func (a *Agent) communicatorFor(c etlv1alpha1.Communication) (communicator, error) {
	switch c {
	case etlv1alpha1.CommHPush, etlv1alpha1.CommIO:
		return hpush{a}, nil
	case etlv1alpha1.CommHPull:
		return hpull{a}, nil
	case etlv1alpha1.CommWS:
		return wsComm{a}, nil
	}
	return nil, fmt.Errorf("unknown communication %q", c)
}

// sendsFQN reports whether in goes to the transformer as a path on the node.
func sendsFQN(t Target, in input) bool {
	return in.local && t.Argument == etlv1alpha1.ArgFQN
}
