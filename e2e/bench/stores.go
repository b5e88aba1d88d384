package bench

import (
	"fmt"
	"strings"
	"time"
)

// timedRuns are the times of one kind of TransformRun, round by round, and what the table calls it;
// and where it was read, the CPU its parts spent in each round.
type timedRuns struct {
	what string
	took []time.Duration
	cpu  []cpuSpent
}

// cpuSpent is the CPU the parts of one round spent, by part.
type cpuSpent map[string]time.Duration

// The parts the store benchmark accounts CPU to.
const (
	cpuOwn    = "own"    // the plain program, or the run's transformer pods
	cpuAgents = "agents" // the node agents
	cpuS3     = "s3"     // the S3 server
)

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

// cpuTable is the CPU each part spent on an object, as the kernel accounted it (the program's
// own usage, the pods' cgroups), in ms an object, median of the rounds and range; and, round by
// round, the program's CPU an object over a node's (its transformer's and its agent's): the rate a
// node with cores of its own reaches against the program's where both are bound by their CPU.
// Empty when no round's CPU was read.
func cpuTable(objects int, plain timedRuns, runs ...timedRuns) string {
	perObject := func(r timedRuns, parts ...string) map[int]float64 {
		m := map[int]float64{}
		for round, spent := range r.cpu {
			if spent == nil {
				continue
			}
			var d time.Duration
			for _, part := range parts {
				d += spent[part]
			}
			m[round] = float64(d.Microseconds()) / 1e3 / float64(objects)
		}
		return m
	}
	inverse := func(m map[int]float64) map[int]float64 {
		out := map[int]float64{}
		for r, v := range m {
			if v > 0 {
				out[r] = 1 / v
			}
		}
		return out
	}
	ms := func(m map[int]float64) string {
		if len(m) == 0 {
			return ""
		}
		return spread(values(m), "%.2f")
	}
	program := perObject(plain, cpuOwn)
	if len(program) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nCPU an object (ms: median of rounds and range), and the program's CPU an object over a node's (its transformer and agent)\n\n")
	b.WriteString("| what | the program or the transformers | the agents | the S3 server | all | the program's over a node's |\n|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %s | %s |  | %s | %s |  |\n", plain.what, ms(program), ms(perObject(plain, cpuS3)), ms(perObject(plain, cpuOwn, cpuS3)))
	for _, r := range runs {
		node := perObject(r, cpuOwn, cpuAgents)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.what, ms(perObject(r, cpuOwn)), ms(perObject(r, cpuAgents)),
			ms(perObject(r, cpuS3)), ms(perObject(r, cpuOwn, cpuAgents, cpuS3)), ratio(inverse(node), inverse(program)))
	}
	return b.String()
}
