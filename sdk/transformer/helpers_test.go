package transformer_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/mlkube/mlkube/api/wire"
)

// withToken dials a WebSocket with the node agent's credential.
func withToken(token string) *websocket.DialOptions {
	return &websocket.DialOptions{HTTPHeader: http.Header{wire.HeaderTransformerToken: {token}}}
}

// tagged echoes its input behind a header naming the object and its
// arguments, so that a round trip shows both arrive intact.
func tagged(_ context.Context, in io.Reader, object, args string) (io.Reader, error) {
	return io.MultiReader(strings.NewReader(tag(object, args)), in), nil
}

func tag(object, args string) string { return object + "\x00" + args + "\x00" }

func echo(_ context.Context, in io.Reader, _, _ string) (io.Reader, error) { return in, nil }

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{1})
	r.Read(b)
	return b
}
