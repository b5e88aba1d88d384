package owned

import "time"

// The wait before a failed pod is replaced: BaseBackoff doubled per replacement, capped at
// MaxBackoff, counted from the moment the pod failed (the Sedna controllers' per-key exponential
// backoff, derived from cluster state so that it survives a manager restart).
const (
	BaseBackoff = 5 * time.Second
	MaxBackoff  = 5 * time.Minute
)

// Backoff is the wait before the nth replacement of a failed pod: BaseBackoff for the first,
// twice the previous for each one after, up to MaxBackoff.
func Backoff(nth int32) time.Duration {
	d := BaseBackoff
	for i := int32(1); i < nth && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// Sooner is the earlier of two requeue delays, where a current of 0 means none yet. A delay that
// is already due becomes one second: the reconcile that sees it comes soon, not in a hot loop.
func Sooner(current, after time.Duration) time.Duration {
	if after <= 0 {
		after = time.Second
	}
	if current == 0 || after < current {
		return after
	}
	return current
}
