package wire

// The credential of agent → transformer requests (docs/design/tenant-isolation.md, "1. The
// credential"): the node agent sends a per-Transform token on every request and WebSocket upgrade
// to a transformer, and a transformer answers nothing but GET PathHealth without it. The token
// reaches the transformer pod through a Secret volume, never through the pod spec, which more
// people can read than the namespace's Secrets.
const (
	// HeaderTransformerToken carries the token. A request to a transformer without it, or with
	// another Transform's, is refused with 401.
	HeaderTransformerToken = "X-Mlkube-Transformer-Token"
	// TransformerTokenDir is where the controller mounts the Transform's token Secret, read-only,
	// in the transformer container.
	TransformerTokenDir = "/var/run/secrets/mlkube.io/transformer"
	// TransformerTokenKey is the token's file name in TransformerTokenDir and its key in the
	// Secret.
	TransformerTokenKey = "token"
	// EnvTokenFile names the token file, TransformerTokenDir/TransformerTokenKey; the SDK reads
	// the token from it, again whenever the file changes.
	EnvTokenFile = "MLKUBE_TOKEN_FILE"
)

// PathInflight is where the node agent serves the bytes of objects in flight to hpull
// transformers, GET PathInflight<id>: each id is a one-time capability, served once, to the
// transformer it was issued to. An hpull transformer fetches ?src= only from there, on the
// address the request came from.
const PathInflight = "/v1/inflight/"
