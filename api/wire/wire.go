package wire

const (
	// PathHealth answers GET with 200 and HealthOK once the transformer serves.
	PathHealth = "/health"
	// HealthOK is the body of a healthy PathHealth answer.
	HealthOK = "ok"
	// PathWS is upgraded to a WebSocket for the ws mechanism.
	PathWS = "/ws"

	// QueryArgs carries the per-request transformation arguments.
	QueryArgs = "args"
	// QueryFQN names a node-local file to read instead of a request body.
	QueryFQN = "fqn"
	// QuerySrc is the http(s) URL an hpull transformer fetches the object from.
	QuerySrc = "src"

	// EnvPort overrides the port a transformer listens on, the Transform
	// API's v1alpha1.DefaultPort, which is also where the agent reaches it
	// unless the Transform says otherwise.
	EnvPort = "PORT"
	// EnvFQNRoot is the directory under which a transformer may open fqn
	// paths; unset means fqn requests are refused.
	EnvFQNRoot = "MLKUBE_FQN_ROOT"

	// MaxControlSize bounds a ws control message, which carries only an
	// object name and arguments.
	MaxControlSize = 64 << 10
	// MaxArgs bounds a request's args in bytes, for every mechanism: they
	// travel in a URL query or a ws control message, and with an object
	// name (MaxObjectName) and an fqn they stay within MaxControlSize even
	// when every byte is JSON-escaped.
	MaxArgs = 4 << 10
)
