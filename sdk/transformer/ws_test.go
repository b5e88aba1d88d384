package transformer_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// An agent may send the next objects before the first answer arrives; the
// answers come back in order, errors included.
func TestWSPipelinedObjectsAnswerInOrder(t *testing.T) {
	s := transformertest.NewServer(t, failing)
	conn, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(s.URL, "http")+wire.PathWS, withToken(s.Token))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(-1)
	objects := []string{"first", "func-error", "third"}
	ins := [][]byte{randomBytes(2 << 20), []byte("x"), []byte("third object")}
	sent := make(chan error, 1)
	go func() {
		for i, object := range objects {
			ctrl, _ := wire.MarshalControl(wire.Control{Object: object})
			if err := conn.Write(context.Background(), websocket.MessageText, ctrl); err != nil {
				sent <- err
				return
			}
			if err := conn.Write(context.Background(), websocket.MessageBinary, ins[i]); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for i, object := range objects {
		typ, r, err := conn.Reader(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if object == "func-error" {
			if msg, err := wire.ParseError(data); typ != websocket.MessageText || err != nil || !strings.Contains(msg, object) {
				t.Errorf("answer %d: %v %q, want an error message", i, typ, data)
			}
			continue
		}
		if typ != websocket.MessageBinary || !bytes.Equal(data, ins[i]) {
			t.Errorf("answer %d: %v of %d bytes, want the %d bytes of %s", i, typ, len(data), len(ins[i]), object)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}

// A message out of protocol ends the session with a policy violation: the
// stream cannot be resynchronised.
func TestWSProtocolViolation(t *testing.T) {
	s := transformertest.NewServer(t, echo)
	cases := map[string]struct {
		typ  websocket.MessageType
		data string
	}{
		"binary first":     {typ: websocket.MessageBinary, data: "bytes"},
		"control not json": {typ: websocket.MessageText, data: "object=o"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			conn, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(s.URL, "http")+wire.PathWS, withToken(s.Token))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			if err := conn.Write(t.Context(), tc.typ, []byte(tc.data)); err != nil {
				t.Fatal(err)
			}
			if _, _, err := conn.Reader(t.Context()); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
				t.Errorf("read = %v, want close status %v", err, websocket.StatusPolicyViolation)
			}
		})
	}
}
