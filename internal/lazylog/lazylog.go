// Package lazylog defers a logger's key-value pairs until a line is written. A zap logger encodes
// the pairs of WithValues at once: controller-runtime's webhooks build a logger with seven pairs
// for every admission request (twice), and almost none of them ever logs a line, so the encoding
// was about a seventh of the webhook server's CPU under load.
package lazylog

import (
	"github.com/go-logr/logr"
)

// WithValues is base.WithValues(kv...), with the pairs added only when a line is written.
func WithValues(base logr.Logger, kv ...any) logr.Logger {
	if base.GetSink() == nil || len(kv) == 0 {
		return base.WithValues(kv...)
	}
	return base.WithSink(sink{base: base.GetSink(), kv: kv})
}

// sink adds kv to base's lines when it writes them.
type sink struct {
	base logr.LogSink
	kv   []any
}

// Init does nothing: base was initialised by the logger it came from.
func (s sink) Init(logr.RuntimeInfo) {}

func (s sink) Enabled(level int) bool { return s.base.Enabled(level) }

func (s sink) Info(level int, msg string, kv ...any) {
	s.resolved().Info(level, msg, kv...)
}

func (s sink) Error(err error, msg string, kv ...any) {
	s.resolved().Error(err, msg, kv...)
}

// resolved is base with the pairs, and one more frame to skip for the caller's line: this sink's
// Info or Error stands between the logger and base.
func (s sink) resolved() logr.LogSink {
	base := s.base
	if cd, ok := base.(logr.CallDepthLogSink); ok {
		base = cd.WithCallDepth(1)
	}
	return base.WithValues(s.kv...)
}

func (s sink) WithValues(kv ...any) logr.LogSink {
	return sink{base: s.base, kv: append(s.kv[:len(s.kv):len(s.kv)], kv...)}
}

func (s sink) WithName(name string) logr.LogSink {
	return sink{base: s.base.WithName(name), kv: s.kv}
}

// WithCallDepth keeps the pairs lazy for a logger that skips more frames.
func (s sink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.base.(logr.CallDepthLogSink); ok {
		return sink{base: cd.WithCallDepth(depth), kv: s.kv}
	}
	return s
}
