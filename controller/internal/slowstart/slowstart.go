// Package slowstart runs many API calls fast without flooding the API server when they all fail:
// the Kubernetes Job controller's slow start, batches of 1, 2, 4, … run concurrently, stopping
// after the first batch with an error.
package slowstart

import (
	"errors"
	"sync"
)

// MaxBatch caps a batch: beyond it, the client's rate limiter and the API server's fairness
// decide the pace anyway.
const MaxBatch = 64

// Do calls fn for every item and returns how many calls were made and their joined errors.
// Items after a failing batch are not attempted: the next reconcile retries them.
func Do[T any](items []T, fn func(T) error) (int, error) {
	return DoBatches(items, fn, nil)
}

// DoBatches is Do that also calls batchDone, when not nil, after each batch with the batch's
// items and their errors (nil where fn succeeded), before the next batch starts: the caller can
// report a batch as one, as the Job controller's events do.
func DoBatches[T any](items []T, fn func(T) error, batchDone func(batch []T, errs []error)) (int, error) {
	done := 0
	for batch := 1; done < len(items); batch = min(2*batch, MaxBatch) {
		n := min(batch, len(items)-done)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = fn(items[done+i]) })
		}
		wg.Wait()
		if batchDone != nil {
			batchDone(items[done:done+n], errs)
		}
		done += n
		if err := errors.Join(errs...); err != nil {
			return done, err
		}
	}
	return done, nil
}
