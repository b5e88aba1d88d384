// Package loadgen drives objects through the data path and through the bare parts it is measured
// against, checking every result: closed-loop HTTP clients with one object in flight each,
// WebSocket streams with a window of objects in flight, and the baselines' servers (an HTTP and
// WebSocket echo, a file server, a TCP relay). The in-process benchmarks of the agent and the
// in-cluster load generator (e2e/images/loadgen) share it, so both count and check the same way.
package loadgen
