package local

import (
	"context"
	"fmt"
	"time"
)

// pollInterval is short: the conditions are cheap local reads or API calls on loopback.
const pollInterval = 200 * time.Millisecond

// poll calls cond until it reports true or timeout (or ctx) ends. An error from cond does not stop
// the polling (the thing waited for may simply not be up yet); the last one is returned as the
// reason when time runs out.
func poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			if last != nil {
				return last
			}
			return ctx.Err()
		case <-t.C:
		}
	}
}

// pollErr is poll with an error that says what it waited for.
func pollErr(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	if err := poll(ctx, timeout, cond); err != nil {
		return fmt.Errorf("waiting %v for %s: %w", timeout, what, err)
	}
	return nil
}
