package agent

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// startObjects dials the ws transformer s and starts len(bodies) objects on
// the one connection, before any answer is taken.
func startObjects(t *testing.T, e *env, url, token string, bodies [][]byte) (*wsConn, []*wsPending) {
	t.Helper()
	c, err := dialWS(context.Background(), url, token, 10*time.Second, e.agent.panics)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.fail(errConnClosed) })
	var ps []*wsPending
	for i, b := range bodies {
		p, err := c.start(context.Background(), wire.Control{Object: string(rune('a' + i))}, bytes.NewReader(b))
		if err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		ps = append(ps, p)
	}
	return c, ps
}

// TestWSResultGivenUpKeepsTheConnection: a result its reader stops reading
// (its destination refused it, over a quota) does not fail the objects in
// flight behind it on the same connection; a TransformRun's siblings used
// to fail with "ws connection closed" beside the one object over a quota.
// A result longer than maxDrain still costs the connection, and the
// objects behind it fail instead of waiting for its bytes.
func TestWSResultGivenUpKeepsTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size     int
		keepConn bool
	}{
		{"short", 1 << 20, true},
		{"over maxDrain", maxDrain + 1<<20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			s := e.addTransform("t", etlv1alpha1.CommWS, "", echo)
			first := bytes.Repeat([]byte("1"), tc.size)
			second := bytes.Repeat([]byte("2"), 64<<10)
			c, ps := startObjects(t, e, s.URL, s.Token, [][]byte{first, second})

			r, err := ps[0].wait()
			if err != nil {
				t.Fatal(err)
			}
			head := make([]byte, 10)
			if _, err := io.ReadFull(r, head); err != nil || string(head) != "1111111111" {
				t.Fatalf("start of the first result: %q, %v", head, err)
			}
			r.Close() // given up on, as a refused destination does

			r2, err := ps[1].wait()
			var got []byte
			if err == nil {
				got, err = io.ReadAll(r2)
				r2.Close()
			}
			if !tc.keepConn {
				if err == nil {
					t.Errorf("the object behind a given-up result of %d bytes got its %d bytes; want the connection closed", tc.size, len(got))
				}
				if !c.broken() {
					t.Error("the connection is open after a given-up result over maxDrain")
				}
				return
			}
			if err != nil || !bytes.Equal(got, second) {
				t.Fatalf("object behind a given-up result: %d bytes, %v; want its %d bytes", len(got), err, len(second))
			}
			if c.broken() {
				t.Fatalf("connection closed: %v", c.err)
			}
			// And the connection carries the next object.
			p, err := c.start(context.Background(), wire.Control{Object: "c"}, bytes.NewReader([]byte("3")))
			if err != nil {
				t.Fatal(err)
			}
			r3, err := p.wait()
			if err != nil {
				t.Fatal(err)
			}
			defer r3.Close()
			if b, err := io.ReadAll(r3); err != nil || string(b) != "3" {
				t.Errorf("next object: %q, %v", b, err)
			}
		})
	}
}
