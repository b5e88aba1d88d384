// Package panics reports the panics of the node agent's own goroutines, its
// run executor's included. net/http recovers a handler's panic, but not one
// of a goroutine the handler started, which would end the process and every
// object on the node: each goroutine of the data path is started with GoSafe
// instead.
package panics

import (
	"errors"
	"log/slog"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Reporter logs and counts recovered panics.
type Reporter struct {
	Log   *slog.Logger
	Count *prometheus.CounterVec // by goroutine
}

// ErrInternal is what the objects of a goroutine that panicked see; the
// panic itself is in the agent's log.
var ErrInternal = errors.New("internal error of the node agent (logged on the agent)")

// Call runs f and returns nil, or ErrInternal after a panic of f, which it
// recovers and reports: logged with its stack, and counted in Count by what.
func (p *Reporter) Call(what string, f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			p.Log.Error("recovered a panic; the agent goes on", "goroutine", what, "panic", v, "stack", string(debug.Stack()))
			p.Count.WithLabelValues(what).Inc()
			err = ErrInternal
		}
	}()
	f()
	return nil
}

// GoSafe runs f in a new goroutine through Call. What f holds it releases with
// defers, which run before the panic is recovered.
func (p *Reporter) GoSafe(what string, f func()) {
	go func() { _ = p.Call(what, f) }() // reported by Call
}
