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
		timedRuns{"TransformRun", []time.Duration{10 * time.Second, 20 * time.Second}, nil},
		timedRuns{"TransformRun, overwrite", []time.Duration{40 * time.Second, 40 * time.Second}, nil})
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

func TestCPUTableSetsTheProgramAgainstANodesParts(t *testing.T) {
	// 1,000 objects. The program spends 4 s and then 6 s (4 and 6 ms an object), the S3 server
	// 2 s; the run's transformers 3 s, its agents 1 s then 3 s: a node's parts 4 and 6 ms an
	// object, so the program's over a node's is 1.00x both rounds. A round whose CPU was not read
	// is left out.
	ms := func(n int) time.Duration { return time.Duration(n) * time.Second }
	plain := timedRuns{what: "plain program", cpu: []cpuSpent{{cpuOwn: ms(4), cpuS3: ms(2)}, {cpuOwn: ms(6), cpuS3: ms(2)}}}
	run := timedRuns{what: "TransformRun", cpu: []cpuSpent{{cpuOwn: ms(3), cpuAgents: ms(1), cpuS3: ms(2)}, {cpuOwn: ms(3), cpuAgents: ms(3), cpuS3: ms(2)}, nil}}
	got := cpuTable(1000, plain, run)
	for _, want := range []string{
		"| plain program | 5.00 (4.00–6.00) |  | 2.00 (2.00–2.00) | 7.00 (6.00–8.00) |  |",
		"| TransformRun | 3.00 (3.00–3.00) | 2.00 (1.00–3.00) | 2.00 (2.00–2.00) | 7.00 (6.00–8.00) | 1.00x (1.00–1.00x) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if got := cpuTable(1000, timedRuns{what: "plain program", cpu: []cpuSpent{nil}}, run); got != "" {
		t.Errorf("a table without the program's CPU: %q; want none", got)
	}
}
