// Package psrendezvous is the e2e test workload for MxJob: a tiny parameter-server
// rendezvous wired only by the DMLC environment the controller gives every replica
// (see docs/design/mxjob.md, "Controller contract"). If the controller gets any
// part of that contract wrong (a role, a count, the scheduler's Service name or port,
// MX_CONFIG), the replicas either refuse to start with an error naming the variable
// or never meet, and the job fails with a message naming the missing peers.
//
// The protocol, in dist mode:
//
//  1. The scheduler listens on DMLC_PS_ROOT_PORT. Servers and workers dial
//     DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT (retrying until the deadline, because the
//     scheduler's pod and Service may come up later) and register; a server also
//     sends the address where it accepts pushes.
//  2. Once all DMLC_NUM_SERVER servers and DMLC_NUM_WORKER workers registered, the
//     scheduler sends everyone the server list.
//  3. Each worker pushes a small vector, derived from its and the server's index, to
//     every server. A server sums the pushes of all workers and answers each worker
//     with the sum; the worker checks it against the value computed in closed form.
//  4. Workers and servers report done; when all did, the scheduler tells everyone to
//     finish, and every process exits 0.
//
// Any process that is still waiting when its deadline expires fails with a
// [MissingError] naming who it was waiting for, e.g.
// "scheduler: missing worker-2 (waiting for registration: deadline 2m0s exceeded)".
// Servers and workers learn the scheduler's view through progress messages, and
// the scheduler tells them who is missing when it gives up, so every replica
// names the same missing peers. A replica that registered and left (its pod was
// recreated) may register again and resume.
//
// Messages are line-delimited JSON over TCP ([Conn]). Every role takes a
// [net.Listener] and/or a [DialFunc] so tests run whole jobs in one process on
// 127.0.0.1.
//
// Log lines on stdout, one per peer interaction, each prefixed with the node name
// ("scheduler", "server-<i>", "worker-<i>"), are part of the contract with the e2e
// tests, which grep them per replica; see the Log* format constants.
package psrendezvous
