package psrendezvous

// PushValues is what a worker pushes to a server. It differs per worker and per
// server, so a server that drops, duplicates or mixes up pushes, or a worker that
// reads another server's answer, sees a wrong aggregate.
func PushValues(worker, server int) []int64 {
	w, s := int64(worker+1), int64(server+1)
	return []int64{w, s, w * s}
}

// pushLen is how many values every push carries.
var pushLen = len(PushValues(0, 0))

// Sum adds vectors element-wise; it is what a server computes.
func Sum(vectors ...[]int64) []int64 {
	var sum []int64
	for _, v := range vectors {
		if sum == nil {
			sum = make([]int64, len(v))
		}
		for i, x := range v {
			sum[i] += x
		}
	}
	return sum
}

// ExpectedAggregate is the sum of all workers' pushes to one server, in closed
// form so that the workers' check does not share code with the servers' sum.
func ExpectedAggregate(workers, server int) []int64 {
	n, s := int64(workers), int64(server+1)
	triangle := n * (n + 1) / 2 // 1 + 2 + … + n
	return []int64{triangle, n * s, triangle * s}
}
