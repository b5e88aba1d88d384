package wire

import (
	"fmt"
	"strconv"
	"time"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// HeaderObjectTimeout carries, on every hpush and hpull request the agent sends a transformer,
// how long the agent still waits for the object: whole milliseconds, as a decimal integer. The
// transformer bounds its own work on the object by it. It cannot rely on noticing the agent give
// up: an HTTP/1 server sees a closed connection only once it has read the request body to its
// end, which a command that stopped reading never lets it do.
const HeaderObjectTimeout = "X-Mlkube-Object-Timeout"

// FormatObjectTimeout is HeaderObjectTimeout's value for the time left, d: rounded up to whole
// milliseconds, at least one, so a transformer never gives up before the agent does.
func FormatObjectTimeout(d time.Duration) string {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return strconv.FormatInt(int64(max(ms, 1)), 10)
}

// MaxObjectTimeout is the most time the agent may give an object: a pipeline's stages share
// the sum of their Transforms' object timeouts, each at most v1alpha1.MaxObjectTimeout.
const MaxObjectTimeout = MaxPipelineStages * v1alpha1.MaxObjectTimeout

// ParseObjectTimeout reads HeaderObjectTimeout's value: from 1 ms to MaxObjectTimeout.
func ParseObjectTimeout(v string) (time.Duration, error) {
	maxMS := int64(MaxObjectTimeout / time.Millisecond)
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms < 1 || ms > maxMS {
		return 0, fmt.Errorf("header %s: %.32q is not a whole number of milliseconds from 1 to %d", HeaderObjectTimeout, v, maxMS)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
