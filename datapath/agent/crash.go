package agent

import (
	"errors"
	"log/slog"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// panics reports the panics of the agent's own goroutines. net/http
// recovers a handler's panic, but not one of a goroutine the handler
// started, which would end the process and every object on the node: each
// goroutine of the agent is started with goSafe instead.
type panics struct {
	log   *slog.Logger
	count *prometheus.CounterVec // by goroutine
}

// errInternal is what the objects of a goroutine that panicked see; the
// panic itself is in the agent's log.
var errInternal = errors.New("internal error of the node agent (logged on the agent)")

// call runs f and returns nil, or errInternal after a panic of f, which it
// recovers and reports: logged with its stack, and counted in
// mlkube_datapath_panics_total by what.
func (p *panics) call(what string, f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("recovered a panic; the agent goes on", "goroutine", what, "panic", v, "stack", string(debug.Stack()))
			p.count.WithLabelValues(what).Inc()
			err = errInternal
		}
	}()
	f()
	return nil
}

// goSafe runs f in a new goroutine through call. What f holds it releases
// with defers, which run before the panic is recovered.
func (p *panics) goSafe(what string, f func()) {
	go func() { _ = p.call(what, f) }() // reported by call
}
