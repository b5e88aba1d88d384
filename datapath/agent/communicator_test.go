package agent

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// writeObject stores data as object under the agent's data root.
func (e *env) writeObject(object string, data []byte) {
	e.t.Helper()
	path := filepath.Join(e.root, object)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// TestRoundTrip moves objects of every size through every communicator and
// argument, from every source: a PUT body, the data root, a ?src= URL.
func TestRoundTrip(t *testing.T) {
	sizes := []transformertest.Object{
		{Name: "empty", Size: 0}, {Name: "one", Size: 1}, {Name: "buffer+1", Size: bufpool.ObjectSize + 1}, {Name: "3MiB", Size: 3<<20 + 3},
	}
	for _, comm := range comms {
		for _, arg := range []etlv1alpha1.Argument{etlv1alpha1.ArgBytes, etlv1alpha1.ArgFQN, etlv1alpha1.ArgURL} {
			t.Run(string(comm)+"/arg="+string(arg), func(t *testing.T) {
				e := newEnv(t, allowLoopbackSrc(t))
				e.addTransform("echo", comm, arg, echo)
				src := newSource(t)
				for _, o := range sizes {
					data := o.Bytes()
					object := "dir/" + o.Name + " 100%"
					e.writeObject(object, data)
					srcURL := src.put(data)
					for name, a := range map[string]answer{
						"PUT":      e.put("echo", object, wire.Query{}, data),
						"GET":      e.get("echo", object, wire.Query{}),
						"GET ?src": e.get("echo", object, wire.Query{Src: srcURL}),
					} {
						if a.status != http.StatusOK {
							t.Errorf("%s %s: status %d: %s", name, o.Name, a.status, a.body)
							continue
						}
						transformertest.CheckBytes(t, a.body, data)
					}
				}
			})
		}
	}
}

// TestArgsPassthrough checks that ?args= reaches the transformer.
func TestArgsPassthrough(t *testing.T) {
	for _, comm := range comms {
		t.Run(string(comm), func(t *testing.T) {
			e := newEnv(t)
			e.addTransform("t", comm, "", tag("t"))
			e.writeObject("obj", []byte("x"))
			for _, a := range []answer{
				e.put("t", "obj", wire.Query{Args: "k=v&w= z"}, []byte("x")),
				e.get("t", "obj", wire.Query{Args: "k=v&w= z"}),
			} {
				if a.status != http.StatusOK || string(a.body) != "x|t:k=v&w= z" {
					t.Errorf("got %d %q, want 200 %q", a.status, a.body, "x|t:k=v&w= z")
				}
			}
		})
	}
}

// TestPipeline runs a>>b>>c with every communicator in every position.
func TestPipeline(t *testing.T) {
	for _, first := range comms {
		for _, second := range comms {
			t.Run(string(first)+">>"+string(second), func(t *testing.T) {
				e := newEnv(t)
				e.addTransform("a", first, etlv1alpha1.ArgFQN, tag("a"))
				e.addTransform("b", second, "", tag("b"))
				e.addTransform("c", etlv1alpha1.CommWS, "", tag("c"))
				e.writeObject("obj", []byte("x"))
				want := "x|a:1|b:1|c:1"
				for _, a := range []answer{
					e.put("a>>b>>c", "obj", wire.Query{Args: "1"}, []byte("x")),
					e.get("a>>b>>c", "obj", wire.Query{Args: "1"}),
				} {
					if a.status != http.StatusOK || string(a.body) != want {
						t.Errorf("got %d %q, want 200 %q", a.status, a.body, want)
					}
				}
			})
		}
	}
}

// TestPipelineSameTransformTwice runs a ws transformer twice in a row with
// a single pooled connection: the second stage must not wait behind the
// first on one connection.
func TestPipelineSameTransformTwice(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.WSConns = 1 })
	e.addTransform("a", etlv1alpha1.CommWS, "", tag("a"))
	data := transformertest.Object{Size: 4 << 20}.Bytes()
	a := e.put("a>>a", "obj", wire.Query{}, data)
	want := append(append([]byte{}, data...), "|a:|a:"...)
	if a.status != http.StatusOK {
		t.Fatalf("status %d: %s", a.status, a.body)
	}
	transformertest.CheckBytes(t, a.body, want)
}

// TestFQNSendsPath checks that argument fqn hands the transformer the
// object's path on the node rather than its bytes.
func TestFQNSendsPath(t *testing.T) {
	for _, comm := range comms {
		t.Run(string(comm), func(t *testing.T) {
			e := newEnv(t)
			got := make(chan int64, 1)
			e.addTransform("t", comm, etlv1alpha1.ArgFQN, countingEcho(got))
			e.writeObject("obj", []byte("payload"))
			if a := e.get("t", "obj", wire.Query{}); a.status != http.StatusOK || string(a.body) != "payload" {
				t.Fatalf("got %d %q", a.status, a.body)
			}
			if n := <-got; n != -1 {
				t.Errorf("transformer received %d bytes in its body; want the file (fqn)", n)
			}
		})
	}
}
