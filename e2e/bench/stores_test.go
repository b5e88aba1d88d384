package bench

import (
	"strings"
	"testing"
	"time"
)

func TestStoreTableComparesTheRunWithThePlainProgramRoundByRound(t *testing.T) {
	// 1,000 objects of 1 MiB: the plain program in 20 s and 25 s, the run on 2 nodes in 10 s and
	// 20 s; round by round the run is 2x and 1.25x the plain program, per node 1x and 0.62x.
	got := storeTable(1000, 1<<20, 4, 2, []time.Duration{20 * time.Second, 25 * time.Second}, []time.Duration{10 * time.Second, 20 * time.Second})
	for _, want := range []string{
		"1000 × 1 MiB objects from a bucket through md5 into a bucket, 4 requests at a time on each node",
		"| plain program on one node (minio-go: GET, MD5, PUT) | 45 (40–50) | 47 (42–52) |  |",
		"| TransformRun on 2 nodes | 75 (50–100) | 79 (52–105) | 1.62x (1.25–2.00x) |",
		"| TransformRun, per node | 38 (25–50) | 39 (26–52) | 0.81x (0.62–1.00x) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
}
