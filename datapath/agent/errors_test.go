package agent

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
)

// TestTransformerError checks that a failed object is answered 502 with the
// transformer's message verbatim, by every communicator (over ws an error
// message, which must not be swallowed), and that the next object works.
func TestTransformerError(t *testing.T) {
	const msg = `bad input: "line 3" is not <valid>`
	for _, comm := range comms {
		t.Run(string(comm), func(t *testing.T) {
			e := newEnv(t)
			e.addTransform("bad", comm, "", fail(msg))
			e.addTransform("echo", comm, "", echo)
			e.writeObject("obj", []byte("x"))
			answers := map[string]answer{
				"PUT":          e.put("bad", "obj", wire.Query{}, []byte("x")),
				"PUT pipeline": e.put("echo>>bad", "obj", wire.Query{}, []byte("x")),
			}
			answers["GET"] = e.get("bad", "obj", wire.Query{})
			for name, a := range answers {
				if a.status != http.StatusBadGateway {
					t.Errorf("%s: status %d, want 502: %s", name, a.status, a.body)
					continue
				}
				want := Error{Error: msg, Transform: "default/" + strings.Fields(name + " bad")[1], Object: "obj", Node: testNode}
				if name == "PUT pipeline" {
					want.Transform = "default/echo>>bad"
				}
				if got := a.apiError(t); got != want {
					t.Errorf("%s: error %+v, want %+v", name, got, want)
				}
			}
			if a := e.put("echo", "obj", wire.Query{}, []byte("after")); a.status != http.StatusOK || string(a.body) != "after" {
				t.Errorf("object after a failure: %d %q", a.status, a.body)
			}
		})
	}
}

// TestObjectTimeout checks that a transformer slower than objectTimeout is
// answered 504, and that its communicator recovers.
func TestObjectTimeout(t *testing.T) {
	for _, comm := range comms {
		t.Run(string(comm), func(t *testing.T) {
			e := newEnv(t)
			e.addTransform("slow", comm, "", hang)
			e.setTimeout("slow", 50*time.Millisecond)
			e.addTransform("echo", comm, "", echo)
			a := e.put("slow", "obj", wire.Query{}, []byte("x"))
			if a.status != http.StatusGatewayTimeout {
				t.Fatalf("status %d, want 504: %s", a.status, a.body)
			}
			if got := a.apiError(t).Error; !strings.Contains(got, "timeout") {
				t.Errorf("error %q does not say timeout", got)
			}
			if a := e.put("echo", "obj", wire.Query{}, []byte("after")); a.status != http.StatusOK || string(a.body) != "after" {
				t.Errorf("object after a timeout: %d %q", a.status, a.body)
			}
		})
	}
}

// TestRequestErrors checks the answers to requests the agent refuses
// before any transformer sees them.
func TestRequestErrors(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxObjectSize = 1 << 10 })
	for _, comm := range comms {
		e.addTransform(string(comm), comm, "", echo)
	}
	e.resolver.errs["default/stopped"] = &NotRunningError{Reason: "stopped"}
	e.writeObject("obj", []byte("x"))
	e.writeObject("big", bytes.Repeat([]byte("x"), 1<<10+1))
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(e.root, "escape"))
	os.Symlink("../"+filepath.Base(outside), filepath.Join(e.root, "escape-dir"))
	os.Mkdir(filepath.Join(e.root, "dir"), 0o755)

	large := bytes.Repeat([]byte("y"), 1<<10+1)
	type request struct {
		method, path string
		body         io.Reader
	}
	tr := func(name, escapedObject string) string {
		return PathTransform + "default/" + name + "/" + escapedObject
	}
	cases := map[string]struct {
		req      request
		wantCode int
	}{
		"unknown transform":        {request{"GET", tr("nope", "obj"), nil}, 404},
		"unknown pipeline stage":   {request{"GET", tr("hpush>>nope", "obj"), nil}, 404},
		"unknown object":           {request{"GET", tr("hpush", "missing"), nil}, 404},
		"stopped":                  {request{"GET", tr("stopped", "obj"), nil}, 503},
		"stopped in pipeline":      {request{"PUT", tr("ws>>stopped", "obj"), strings.NewReader("x")}, 503},
		"dot-dot":                  {request{"GET", tr("hpush", "a/../obj"), nil}, 400},
		"escaped dot-dot":          {request{"GET", tr("hpush", "%2E%2E/secret"), nil}, 400},
		"dot-dot in PUT":           {request{"PUT", tr("ws", "../x"), strings.NewReader("x")}, 400},
		"absolute":                 {request{"GET", tr("hpush", "%2Fetc%2Fpasswd"), nil}, 400},
		"absolute double slash":    {request{"GET", tr("hpush", "/etc/passwd"), nil}, 400},
		"symlink escape":           {request{"GET", tr("hpush", "escape"), nil}, 400},
		"symlink dir escape":       {request{"GET", tr("ws", "escape-dir/secret"), nil}, 400},
		"symlink escape hpull":     {request{"GET", tr("hpull", "escape"), nil}, 400},
		"directory":                {request{"GET", tr("hpush", "dir"), nil}, 400},
		"no object":                {request{"GET", tr("hpush", ""), nil}, 400},
		"empty stage":              {request{"GET", tr("hpush>>", "obj"), nil}, 400},
		"bad src":                  {request{"GET", tr("hpush", "obj") + "?src=file:///etc/passwd", nil}, 400},
		"too large PUT":            {request{"PUT", tr("hpush", "obj"), bytes.NewReader(large)}, 413},
		"too large chunked PUT":    {request{"PUT", tr("hpush", "obj"), io.MultiReader(bytes.NewReader(large))}, 413},
		"too large chunked PUT ws": {request{"PUT", tr("ws", "obj"), io.MultiReader(bytes.NewReader(large))}, 413},
		"too large file":           {request{"GET", tr("io", "big"), nil}, 413},
		"too large file hpull":     {request{"PUT", tr("hpull", "obj"), io.MultiReader(bytes.NewReader(large))}, 413},
		"method":                   {request{"POST", tr("hpush", "obj"), nil}, 405},
		// The object API names a namespace first.
		"object without namespace": {request{"GET", "/v1/objects/obj", nil}, 400},
		"namespace dot-dot":        {request{"GET", PathTransform + "../hpush/obj", nil}, 400},
		"namespace dot":            {request{"GET", PathTransform + "./hpush/obj", nil}, 400},
		"namespace escaped":        {request{"GET", PathTransform + "%2E%2E/hpush/obj", nil}, 400},
		"namespace uppercase":      {request{"GET", PathTransform + "Default/hpush/obj", nil}, 400},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := e.do(tc.req.method, e.url+tc.req.path, tc.req.body)
			if a.status != tc.wantCode {
				t.Fatalf("status %d, want %d: %s", a.status, tc.wantCode, a.body)
			}
			got := a.apiError(t)
			if got.Node != testNode || got.Error == "" {
				t.Errorf("error %+v lacks node or message", got)
			}
			// Every path an object takes names the limit and the flag that sets it.
			if tc.wantCode == http.StatusRequestEntityTooLarge && !strings.Contains(got.Error, "over the limit of 1024 bytes of node "+testNode+"'s agent (--max-object-size)") {
				t.Errorf("413 %q does not name the limit, the node and --max-object-size", got.Error)
			}
		})
	}
}
