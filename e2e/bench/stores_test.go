package bench

import (
	"strings"
	"testing"
	"time"
)

func TestStoreTableComparesTheRunWithThePlainProgramRoundByRound(t *testing.T) {
	// 1,000 objects of 1 MiB: the plain program in 20 s and 25 s, the run on 2 nodes in 10 s and
	// 20 s; round by round the run is 2x and 1.25x the plain program, per node 1x and 0.62x. A
	// second kind of run in 40 s both rounds: 0.5x and 0.62x, per node 0.25x and 0.31x.
	got := storeTable(1000, 1<<20, 4, 2, []time.Duration{20 * time.Second, 25 * time.Second},
		timedRuns{"TransformRun", []time.Duration{10 * time.Second, 20 * time.Second}},
		timedRuns{"TransformRun, overwrite", []time.Duration{40 * time.Second, 40 * time.Second}})
	for _, want := range []string{
		"1000 × 1 MiB objects from a bucket through md5 into a bucket, 4 requests at a time on each node",
		"| plain program on one node (minio-go: GET, MD5, PUT) | 45 (40–50) | 47 (42–52) |  |",
		"| TransformRun on 2 nodes | 75 (50–100) | 79 (52–105) | 1.62x (1.25–2.00x) |",
		"| TransformRun, per node | 38 (25–50) | 39 (26–52) | 0.81x (0.62–1.00x) |",
		"| TransformRun, overwrite on 2 nodes | 25 (25–25) | 26 (26–26) | 0.56x (0.50–0.62x) |",
		"| TransformRun, overwrite, per node | 12 (12–12) | 13 (13–13) | 0.28x (0.25–0.31x) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
}
