package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/internal/loadgen"
)

func TestSummarizeTakesRatiosRoundByRound(t *testing.T) {
	res := func(round int, row string, size, inFlight int, objects int64) loadgen.RoundResult {
		return loadgen.RoundResult{Round: round, Result: loadgen.Result{Row: row, Size: size, InFlight: inFlight, Objects: objects, Elapsed: time.Second}}
	}
	got := summarize([]loadgen.RoundResult{
		res(1, "chain", 4096, 16, 1000), res(1, "hpush", 4096, 16, 500),
		res(2, "chain", 4096, 16, 2000), res(2, "hpush", 4096, 16, 1600),
		res(3, "chain", 4096, 16, 1000), res(3, "hpush", 4096, 16, 600),
		res(1, "chain", 1<<20, 4, 100), res(1, "hpush", 1<<20, 4, 50),
	}, map[string][]string{"hpush": {"chain", "bare"}})
	for _, want := range []string{
		"4 KiB objects, 16 in flight (objects/s",
		"| chain | 1000 (1000–2000) |  |",
		// Round by round 0.5, 0.8, 0.6: the median ratio is 0.6, not 600/1000 of the medians.
		"| hpush | 600 (500–1600) | 0.60x (0.50–0.80x) chain |",
		"1 MiB objects, 4 in flight (MB/s",
		"| hpush | 52 | 0.50x chain |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}
