package bench

import (
	"fmt"
	"strings"
	"time"
)

// timedRuns are the times of one kind of TransformRun, round by round, and what the table calls it.
type timedRuns struct {
	what string
	took []time.Duration
}

// storeTable is the store benchmark's table: the plain program's rate, and each kind of
// TransformRun's over every node and per node, each in objects/s (median of the rounds, with the
// range) and against the plain program round by round.
func storeTable(objects, size, workers, nodes int, plain []time.Duration, runs ...timedRuns) string {
	rates := func(ds []time.Duration, per float64) map[int]float64 {
		m := map[int]float64{}
		for r, d := range ds {
			m[r] = float64(objects) / d.Seconds() / per
		}
		return m
	}
	mb := func(m map[int]float64) map[int]float64 {
		out := map[int]float64{}
		for r, v := range m {
			out[r] = v * float64(size) / 1e6
		}
		return out
	}
	p := rates(plain, 1)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d × %s objects from a bucket through md5 into a bucket, %d requests at a time on each node (objects/s and MB/s read: median of rounds and range)\n\n",
		objects, sizeName(size), workers)
	b.WriteString("| what | objects/s | MB/s | against the plain program |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| plain program on one node (minio-go: GET, MD5, PUT) | %s | %s |  |\n", median(p), median(mb(p)))
	for _, run := range runs {
		all, each := rates(run.took, 1), rates(run.took, float64(nodes))
		fmt.Fprintf(&b, "| %s on %d nodes | %s | %s | %s |\n", run.what, nodes, median(all), median(mb(all)), ratio(all, p))
		fmt.Fprintf(&b, "| %s, per node | %s | %s | %s |\n", run.what, median(each), median(mb(each)), ratio(each, p))
	}
	return b.String()
}
