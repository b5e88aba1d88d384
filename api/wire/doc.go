// Package wire holds every contract of the data path, in one place that the transformer SDK, the
// in-pod runtimes, the node agent and the Transform controller all import:
//
//   - agent ↔ transformer: the port's environment variable (the port itself, and the port name
//     the agent and the readiness probe use, are the Transform API's defaults), the HTTP paths and
//     query parameters of the hpush and hpull mechanisms, and the WebSocket control and error
//     messages of the ws mechanism (wire.go, message.go, path.go);
//   - controller → transformer pod: the data root, the environment, the io shim's command line and
//     the code runtimes' images (pods.go);
//   - agent → manager: the statistics an agent serves (stats.go);
//   - manager → agent: a node's share of a TransformRun (noderuns.go), its sources and result
//     names (template.go);
//   - every caller → agent: the token audience (identity.go).
//
// It holds constants, types and pure codecs only, so that both sides build and parse requests with
// the same code and cannot drift apart, and importing it links nothing of either side.
//
// One object moves as follows (see docs/design/etl.md, "Wire contracts"):
//
//	hpush  PUT  /<object>[?args=…]       body = bytes  → 200 + result, or ≥ 400 + message
//	       PUT  /<object>?fqn=<path>     empty body    → same answers
//	hpull  GET  /<object>?src=<URL>      transformer fetches src, answers the result
//	       GET  /<object>?fqn=<path>
//	ws     GET  /ws (upgrade); per object a text message Control, then, unless
//	       Control.FQN is set, one binary message with the bytes; the answer,
//	       in order, is one binary message (the result) or one text message
//	       ErrorMessage.
//
// Object names are UTF-8 strings (JSON carries them over ws); any byte may
// appear, "/" included.
//
// Both directions stream: a transformer may start answering before it has read
// the whole object, so a client must read the answer while it is still sending
// (Go's http.Transport does; a ws client writes from one goroutine and reads
// from another). A ws client may send further objects before earlier answers
// arrive; answers come in order.
//
// A result that fails after its answer has started cannot be turned into an
// error answer any more: over HTTP the transformer breaks the response (a 200
// whose body ends early is a failure), over ws it closes the connection with
// status 1011. A ws connection closed with 1001 is a transformer shutting
// down, 1008 a protocol violation. Objects left unanswered by a closed
// connection have failed and may be retried.
package wire
