// Package transformer is the Go SDK for mlkube transformers. A transformer is
// one Func; the SDK serves it over every mechanism of the wire contract
// (package api/wire): GET /health, hpush (PUT /<object>),
// hpull (GET /<object>?src= or ?fqn=) and ws (GET /ws, one object after the
// other on a persistent WebSocket).
//
// Import it as github.com/mlkube/mlkube/sdk/transformer; that path is kept
// stable for users' code. A complete transformer:
//
//	import "github.com/mlkube/mlkube/sdk/transformer"
//
//	func main() {
//		transformer.Main(func(ctx context.Context, in io.Reader, object, args string) (io.Reader, error) {
//			return in, nil // identity
//		})
//	}
//
// Objects are streamed in both directions: the SDK never holds a whole object
// in memory, it copies through pooled 32 KiB buffers. The first buffer of a
// result is read before the answer is committed, so a Func whose result fails
// early still produces an error answer (HTTP status ≥ 400, ws error message);
// a result that fails after bytes were sent aborts the HTTP response or closes
// the WebSocket, so a truncated result is never taken for a good one.
//
// A transformer answers only its node's agent: every request but GET /health
// must carry the header wire.HeaderTransformerToken with the Transform's
// token, which the controller mounts in the pod and names in the environment
// variable wire.EnvTokenFile. New fails without a token source unless
// WithoutAuth is given (docs/transforms.md, "Credential").
//
// hpull fetches ?src= only from two kinds of URL: the caller's own in-flight
// URLs (http://<caller IP>:<port>/v1/inflight/<id>, no query), and URLs, with
// any path and query, on a store origin listed in the stores file
// (wire.TransformerStoresKey next to the token file, or WithStoresFile): the
// node agent hands presigned GETs of objects of the namespace's ObjectStores
// that way. The stores file is read again when it changes; without it, or with
// WithoutAuth, only in-flight URLs are fetched. A fetch uses no proxy, follows
// no redirect and sends no credential; its errors have the secrets of a
// presigned URL (X-Amz-Signature, X-Amz-Credential) redacted.
//
// To test a transformer, sdk/transformer/transformertest runs a Func in
// process and moves objects through it by every mechanism, as the node agent
// does.
package transformer
