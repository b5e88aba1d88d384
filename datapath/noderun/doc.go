// Package noderun executes a node's share of a TransformRun: the node
// agent's offline-run executor. The manager hands each node its share over
// wire.NodeRunsPath; the agent's HTTP side parses it (Runs.Plan), starts or
// resumes it (Runs.Start) and answers its status (Run.Status).
//
// A run walks its source in the namespace's directory of the node's data
// root, hands each object to the agent's Pipeline (Transformers, which the
// agent implements: the executor never talks to transformers itself) and
// writes each result durably: a hidden temporary name, fsynced, renamed
// (package durable), through the agent's object store (Results), which
// holds results to the namespace's quota and the node's free space as it
// holds the object API's PUTs. It records each result in a journal in the destination once
// the rename is durable, so a run resumed after an agent restart or a
// suspension skips what was done (journal.go). A destination is taken by one
// run at a time and checked against the source once symlinks are resolved
// (destination.go); every failed object is listed in an error manifest
// (errorlog.go). Node-wide caps (Config.MaxRuns, MaxWorkers), shared fairly
// among namespaces (package fairshare), answer 429 past them.
package noderun
