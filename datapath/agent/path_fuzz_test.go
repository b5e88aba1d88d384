package agent

import (
	"crypto/rand"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/api/wire"
)

// FuzzParseTransformPath checks, on arbitrary escaped paths, that a path that parses names a
// safe object (wire.CheckObject) and a pipeline of 1 to wire.MaxPipelineStages stages, none empty
// or with a slash; that what it returns is no longer than the path; and that the path the
// parts escape back to parses to the same parts.
func FuzzParseTransformPath(f *testing.F) {
	for _, seed := range []string{
		"/v1/transform/ns/echo/a/b.txt",
		"/v1/transform/ns/a>>b>>c/dir%2Fobj",
		"/v1/transform/ns/echo/..%2Fetc%2Fpasswd",
		"/v1/transform/ns/a>>>>b/obj",
		"/v1/transform/ns/" + strings.Repeat("t>>", wire.MaxPipelineStages) + "t/obj",
		"/v1/transform/%zz/echo/obj",
		"/v1/transform/ns/a%2Fb/obj",
		"/v1/objects/obj",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, escaped string) {
		p, err := parseTransformPath(escaped)
		if err != nil {
			return
		}
		if err := wire.CheckObject(p.object); err != nil {
			t.Fatalf("%q parsed to object %q: %v", escaped, p.object, err)
		}
		if n := len(p.pipeline); n < 1 || n > wire.MaxPipelineStages {
			t.Fatalf("%q parsed to a pipeline of %d stages", escaped, n)
		}
		if i := slices.IndexFunc(p.pipeline, func(s string) bool { return s == "" || strings.Contains(s, "/") }); i >= 0 {
			t.Fatalf("%q parsed to stage %q", escaped, p.pipeline[i])
		}
		if p.namespace == "" {
			t.Fatalf("%q parsed with no namespace", escaped)
		}
		name := strings.Join(p.pipeline, wire.PipelineSeparator)
		if n := len(p.namespace) + len(name) + len(p.object); n > len(escaped) {
			t.Fatalf("%q (%d bytes) parsed to %d bytes", escaped, len(escaped), n)
		}
		again := PathTransform + url.PathEscape(p.namespace) + "/" + url.PathEscape(name) + wire.ObjectPath(p.object)
		q, err := parseTransformPath(again)
		if err != nil || q.namespace != p.namespace || !slices.Equal(q.pipeline, p.pipeline) || q.object != p.object {
			t.Fatalf("%q parsed to %+v; escaped back to %q it parses to %+v, %v", escaped, p, again, q, err)
		}
	})
}

// FuzzObjectURL checks the URLs the agent sends a transformer for an object the agent accepted
// (hpull, hpush): they always parse, which mustGet counts on; and the transformer reads back the
// object and query, the agent's own in-flight ?src= included.
func FuzzObjectURL(f *testing.F) {
	f.Add("a/b.txt", "", "")
	f.Add("dir/with space/%41?#x", "k=v&x", "http://10.0.0.9/src")
	f.Add(". /x/./y", "args with\nnewline", "")
	f.Add("日本/\x7f\x01", "\xff", "https://h/a%2Fb?q")
	f.Fuzz(func(t *testing.T, object, args, src string) {
		if wire.CheckObject(object) != nil {
			return
		}
		const advertise = "http://10.0.0.7:9000"
		own := advertise + wire.PathInflight + rand.Text()
		for _, q := range []wire.Query{{Args: args, Src: src}, {Args: args, Src: own}, {Args: args, FQN: filepath.Join(wire.DataRoot, object)}} {
			u := wire.ObjectURL("http://10.0.0.8:8000", object, q)
			req, err := http.NewRequest(http.MethodGet, u, nil)
			if err != nil {
				t.Fatalf("ObjectURL(%q, %+v) = %q does not parse: %v", object, q, u, err)
			}
			got, err := wire.ParseObjectPath(req.URL.EscapedPath())
			if gotQ := wire.ParseQuery(req.URL.Query()); err != nil || got != object || gotQ != q {
				t.Fatalf("ObjectURL(%q, %+v) = %q reads back as %q %+v (%v)", object, q, u, got, gotQ, err)
			}
		}
	})
}

// FuzzStreamControl checks the control messages of a stream as readStream and
// startStreamObject take them: parsing never panics; what parses re-encodes to the same control;
// its fields stay within what the message's bytes can spell (an invalid UTF-8 byte becomes a
// 3-byte replacement character); and an object that passes wire.CheckObject stays under the data
// root.
func FuzzStreamControl(f *testing.F) {
	f.Add([]byte(`{"object":"a/b.txt"}`))
	f.Add([]byte(`{"object":"x","args":"k=v","fqn":"/var/lib/mlkube/data/x"}`))
	f.Add([]byte(`{"object":"..\/etc\/passwd"}`))
	f.Add([]byte(`{"object":"\u0000","object":"dup"}`))
	f.Add([]byte(`["not","an","object"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > wire.MaxControlSize {
			return // readStream refuses it before parsing
		}
		ctrl, err := wire.ParseControl(data)
		if err != nil {
			return
		}
		if n := len(ctrl.Object) + len(ctrl.Args) + len(ctrl.FQN); n > 3*len(data) {
			t.Fatalf("%d bytes parsed to %d bytes of fields", len(data), n)
		}
		b, err := wire.MarshalControl(ctrl)
		if err != nil {
			t.Fatalf("MarshalControl(%+v): %v", ctrl, err)
		}
		if again, err := wire.ParseControl(b); err != nil || again != ctrl {
			t.Fatalf("%+v re-encoded to %s, which parses to %+v, %v", ctrl, b, again, err)
		}
		if wire.CheckObject(ctrl.Object) == nil {
			root := wire.DataRoot
			if p := filepath.Join(root, ctrl.Object); p != root && !strings.HasPrefix(p, root+"/") {
				t.Fatalf("object %q passes wire.CheckObject but leaves the data root: %s", ctrl.Object, p)
			}
		}
	})
}
