package wire

// The node agent's client API, for every client of it: the agent serves these, the plugins and
// load generators call them.
const (
	// PathTransform is the inline API: PUT or GET
	// /v1/transform/{namespace}/{pipeline}/{object...}.
	PathTransform = "/v1/transform/"
	// PathStream is its streaming form for ws Transforms:
	// /v1/stream/{namespace}/{name}, a WebSocket of control and object messages.
	PathStream = "/v1/stream/"
)
