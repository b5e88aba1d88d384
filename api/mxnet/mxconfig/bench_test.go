package mxconfig

import (
	"fmt"
	"testing"
)

// BenchmarkMXConfigOf200Workers renders MX_CONFIG for every replica of a job of 1 scheduler,
// 1 server and 200 workers, as the controller creates its pods: the cluster rendered once and
// completed per replica, against json.Marshal of each replica's whole Config (the way before).
// Every rendering is checked against the other's.
func BenchmarkMXConfigOf200Workers(b *testing.B) {
	cluster := Cluster{
		Scheduler: []Endpoint{{URL: "big-0-scheduler-0", Port: 9091}},
		Server:    []Endpoint{{URL: "big-0-server-0", Port: 9091}},
	}
	for i := range 200 {
		cluster.Worker = append(cluster.Worker, Endpoint{URL: fmt.Sprintf("big-0-worker-%d", i), Port: 9091})
	}
	tasks := []Task{{Type: "scheduler"}, {Type: "server"}}
	for i := range 200 {
		tasks = append(tasks, Task{Type: "worker", Index: i})
	}
	want := make([]string, len(tasks))
	for i, t := range tasks {
		want[i] = string(marshal(Config{Cluster: cluster, Task: t}))
	}
	check := func(b *testing.B, i int, got string) {
		if got != want[i] {
			b.Fatalf("replica %d: %s, want %s", i, got, want[i])
		}
	}
	b.Run("whole-per-replica", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i, t := range tasks {
				check(b, i, string(marshal(Config{Cluster: cluster, Task: t})))
			}
		}
	})
	b.Run("cluster-once", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			e := cluster.Encode()
			for i, t := range tasks {
				check(b, i, e.For(t))
			}
		}
	})
}
