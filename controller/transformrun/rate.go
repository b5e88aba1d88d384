package transformrun

import (
	"fmt"
	"math"
	"time"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// rateWindow is the time constant of the recent rate: a sample counts half after about 14 s, so
// the rate follows a change within a minute and one slow poll does not swing it.
const rateWindow = 20 * time.Second

// rates is objects and bytes per second.
type rates struct{ objects, bytes float64 }

// processed is what a node's share transformed in this attempt: done or failed objects, done
// bytes. Skipped objects are not work (the journal says an earlier attempt did them), and
// counting them would show a burst of speed at every resume.
func processed(c v1alpha1.RunCounts) (objects, bytes int64) {
	return c.DoneObjects + c.FailedObjects, c.DoneBytes
}

// recentRates folds the work done between two snapshots of the nodes, elapsed apart, into the
// previous rate. Each node's progress counts alone and never below zero: an agent restarted
// between the snapshots may count again from its journal, which is no negative work. With no
// previous rate (the run just started or resumed), the sample is the rate.
func recentRates(prev rates, before, after []v1alpha1.RunNodeStatus, elapsed time.Duration) rates {
	if elapsed <= 0 {
		return prev
	}
	was := map[string]v1alpha1.RunCounts{}
	for _, n := range before {
		was[n.Node] = n.RunCounts
	}
	var sample rates
	for _, n := range after {
		o1, b1 := processed(n.RunCounts)
		o0, b0 := processed(was[n.Node])
		sample.objects += float64(max(o1-o0, 0))
		sample.bytes += float64(max(b1-b0, 0))
	}
	secs := elapsed.Seconds()
	sample.objects /= secs
	sample.bytes /= secs
	if prev.objects == 0 && prev.bytes == 0 {
		return sample
	}
	alpha := 1 - math.Exp(-secs/rateWindow.Seconds())
	return rates{objects: prev.objects + alpha*(sample.objects-prev.objects), bytes: prev.bytes + alpha*(sample.bytes-prev.bytes)}
}

// nodeRates sets the recent rate of each node of after whose share runs, folded from its own
// rate in before as the run's is; a node whose share is not running has none, so that describe
// gives no ETA for a node that is done or stopped.
func nodeRates(before, after []v1alpha1.RunNodeStatus, elapsed time.Duration) {
	was := map[string]v1alpha1.RunNodeStatus{}
	for _, n := range before {
		was[n.Node] = n
	}
	for i := range after {
		n := &after[i]
		var r rates
		if n.Phase == v1alpha1.RunRunning {
			old, ok := was[n.Node]
			prev := rates{objects: float64(old.ObjectsPerSecond), bytes: float64(old.BytesPerSecond)}
			var b []v1alpha1.RunNodeStatus
			if ok {
				b = []v1alpha1.RunNodeStatus{old}
			}
			r = recentRates(prev, b, after[i:i+1], elapsed)
		}
		n.ObjectsPerSecond, n.BytesPerSecond = int64(math.Round(r.objects)), int64(math.Round(r.bytes))
	}
}

// averageRates is a finished run's rate: all it processed over its whole duration.
func averageRates(totals v1alpha1.RunCounts, took time.Duration) rates {
	if took <= 0 {
		return rates{}
	}
	o, b := processed(totals)
	return rates{objects: float64(o) / took.Seconds(), bytes: float64(b) / took.Seconds()}
}

// eta is the time the remaining objects take at the rate.
func eta(totals v1alpha1.RunCounts, r rates) string {
	return v1alpha1.ETAText(totals.Left(), r.objects)
}

// rateText spells a rate for kubectl get.
func rateText(r rates) string { return v1alpha1.RateText(r.objects, r.bytes) }

// progress is "done/planned": objects finished, in this attempt or an earlier one.
func progress(totals v1alpha1.RunCounts) string {
	return fmt.Sprintf("%d/%d", totals.DoneObjects+totals.SkippedObjects, totals.PlannedObjects)
}
