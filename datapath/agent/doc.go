// Package agent is the node data path agent: one per node (a DaemonSet), it
// moves objects between clients on its node and the node's transformer pods.
//
// Clients call the inline API (docs/design/etl.md, "Node data path agent"):
//
//	PUT /v1/transform/{namespace}/{name}/{object...}        the body is the object
//	GET /v1/transform/{namespace}/{name}/{object...}        the object is read from the namespace's data
//	GET /v1/transform/{namespace}/{name}/{object...}?src=U  the object is fetched from U
//
// Every caller presents a ServiceAccount token for the data path's audience
// (wire.Audience) and RBAC decides what it may do (Options.Access, package
// internal/access, docs/datapath-rbac.md). Each namespace's data is its own
// directory of the node's data root, and objects are named within it.
//
// ?src= is off unless the operator allows hosts (Options.Src, package
// internal/egress): the agent would otherwise fetch any URL from inside the
// cluster for any caller.
//
// {name} may be a pipeline "a>>b>>c", applied in order on this node; ?args=
// reaches every transformer. Failures answer JSON Error with a status that
// says what went wrong. For ws Transforms, GET /v1/stream/{namespace}/{name}
// upgrades to a WebSocket on which a client pipelines many objects (see
// PathStream). hpull transformers fetch their objects from the agent as
// one-time capabilities (GET /v1/inflight/{id}, see wire.PathInflight); clients
// never talk to transformers. The agent also serves its statistics
// (GET /v1/stats), Prometheus metrics (GET /metrics) and GET /healthz.
//
// The manager hands each node its share of a TransformRun over
// wire.NodeRunsPath (PUT/GET/DELETE /v1/runs/{namespace}/{run}), which
// RBAC grants to it alone (noderunapi.go). Package noderun executes it,
// moving each object through the agent's transformers (runpipeline.go) and
// writing its result durably, resumable from a journal.
//
// The object API (wire.PathObjects: PUT, GET, HEAD, DELETE and list of a
// namespace's objects, objects.go) stores objects on the node placement picks
// (package placement) among the ready agents (Options.Peers) and answers from
// any agent by forwarding to the node that holds an object (forward.go); a
// forwarded request carries the forwarding agent's own token and is answered
// from the receiving node only. Writes are durable (package durable) and
// bounded (objbounds.go).
//
// Node-wide caps (Options.MaxOfflineRuns, MaxOfflineWorkers, MaxStreams,
// MaxInlineRequests) answer 429 past them: a few callers must not take the
// whole node. Transformers' answers have bounded headers
// (maxAnswerHeaderBytes; package ws bounds a handshake's). Client
// streams are closed when idle (StreamIdleTimeout) and pinged; a stream,
// pooled transformer connection or hpull transformer's fetch whose peer
// stops reading is closed after WriteTimeout rather than holding the
// agent's buffers, and a fetch lasts no longer than its object (inflight.go).
//
// A Resolver finds the local transformer of a Transform; the HTTP side never
// talks to the API server, so it is tested against in-process transformers.
// One communicator per wire mechanism (package api/wire)
// moves an object to a transformer and streams the result back.
package agent
