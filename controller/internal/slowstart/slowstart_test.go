package slowstart

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

func TestDoCallsEveryItemInGrowingBatches(t *testing.T) {
	items := make([]int, 200)
	for i := range items {
		items[i] = i
	}
	var mu sync.Mutex
	seen := map[int]bool{}
	var inFlight, peak atomic.Int32
	n, err := Do(items, func(i int) error {
		if cur := inFlight.Add(1); cur > peak.Load() {
			peak.Store(cur)
		}
		defer inFlight.Add(-1)
		mu.Lock()
		defer mu.Unlock()
		seen[i] = true
		return nil
	})
	if err != nil || n != 200 || len(seen) != 200 {
		t.Fatalf("Do() = %d, %v with %d items seen; want all 200", n, err, len(seen))
	}
	if peak.Load() > MaxBatch {
		t.Errorf("%d calls in flight; want at most %d", peak.Load(), MaxBatch)
	}
}

func TestDoStopsAfterAFailingBatch(t *testing.T) {
	items := make([]int, 100)
	var calls atomic.Int32
	boom := errors.New("quota exceeded")
	n, err := Do(items, func(int) error {
		calls.Add(1)
		return boom
	})
	// The first batch has one item: it fails, and nothing else is tried.
	if !errors.Is(err, boom) || n != 1 || calls.Load() != 1 {
		t.Errorf("Do() = %d, %v after %d calls; want 1 call and its error", n, err, calls.Load())
	}
}

func TestDoReportsEveryErrorOfTheFailingBatch(t *testing.T) {
	items := []int{0, 1, 2, 3, 4, 5, 6}
	n, err := Do(items, func(i int) error {
		if i >= 3 {
			return errors.New("bad")
		}
		return nil
	})
	// Batches: [0] [1 2] [3 4 5 6]: the third fails with four errors.
	if n != 7 || err == nil || len(err.(interface{ Unwrap() []error }).Unwrap()) != 4 {
		t.Errorf("Do() = %d, %v; want 7 calls and 4 errors", n, err)
	}
}

func TestDoBatchesReportsEachBatchBeforeTheNext(t *testing.T) {
	items := []int{0, 1, 2, 3, 4, 5, 6, 7, 8}
	var batches [][]int
	var failed []int
	n, err := DoBatches(items, func(i int) error {
		if i == 4 || i == 6 {
			return errors.New("bad")
		}
		return nil
	}, func(batch []int, errs []error) {
		batches = append(batches, append([]int(nil), batch...))
		for i, err := range errs {
			if err != nil {
				failed = append(failed, batch[i])
			}
		}
	})
	// Batches [0] [1 2] [3 4 5 6], the third failing at 4 and 6; 7 and 8 are never tried.
	want := [][]int{{0}, {1, 2}, {3, 4, 5, 6}}
	if n != 7 || err == nil || !slices.EqualFunc(batches, want, slices.Equal) || !slices.Equal(failed, []int{4, 6}) {
		t.Errorf("DoBatches() = %d, %v; batches %v, failed %v; want 7 calls, batches %v, failed [4 6]", n, err, batches, failed, want)
	}
}
