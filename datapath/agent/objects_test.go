package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/wire"
)

// newObjectEnv is an agent whose data root has all the space it asks for.
func newObjectEnv(t testing.TB, configure ...func(*Options)) *env {
	e := newEnv(t, configure...)
	e.agent.objects.bounds.freeBytes = func() (int64, error) { return 1 << 40, nil }
	return e
}

func (e *env) objectURL(object string) string {
	return e.url + wire.PathObjects + "default" + wire.ObjectPath(object)
}

func (e *env) listURL(query string) string { return e.url + wire.PathObjects + "default/?" + query }

// reply is what request keeps of a response, its body read and closed.
type reply struct {
	code   int
	header http.Header
	length int64
}

// request sends method to url with body and headers (pairs), as e.do does,
// and returns the response with its body read.
func (e *env) request(method, url string, body io.Reader, headers ...string) (reply, []byte) {
	e.t.Helper()
	resp, data, err := e.send(method, url, body, headers...)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, data
}

// send is request for a goroutine other than the test's: it returns its
// failure rather than ending the test. A body that tells its Len is sent with
// it as Content-Length, whatever its type; any other than those
// http.NewRequest knows is of unknown length (chunked).
func (e *env) send(method, url string, body io.Reader, headers ...string) (reply, []byte, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return reply{}, nil, err
	}
	if b, ok := body.(interface{ Len() int }); ok {
		req.ContentLength = int64(b.Len())
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return reply{}, nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, nil, fmt.Errorf("%s %s: reading the answer: %w", method, url, err)
	}
	return reply{code: resp.StatusCode, header: resp.Header, length: resp.ContentLength}, data, nil
}

// files lists every file under dir, hidden ones included, relative to it.
func files(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestObjectRoundTrip(t *testing.T) {
	e := newObjectEnv(t)
	data := []byte("hello, objects")
	resp, body := e.request(http.MethodPut, e.objectURL("dir/a.txt"), bytes.NewReader(data))
	if resp.code != http.StatusCreated {
		t.Fatalf("PUT: %d %s", resp.code, body)
	}
	if got := resp.header.Get(wire.HeaderNode); got != testNode {
		t.Errorf("PUT answered node %q", got)
	}
	resp, body = e.request(http.MethodGet, e.objectURL("dir/a.txt"), nil)
	if resp.code != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("GET: %d %q", resp.code, body)
	}
	if resp.header.Get(wire.HeaderNode) != testNode {
		t.Errorf("GET lacks %s", wire.HeaderNode)
	}
	if c := resp.header.Get(wire.HeaderChecksum); c != "" && c != sha(data) {
		t.Errorf("GET checksum %s, want %s (or none)", c, sha(data))
	}
	resp, _ = e.request(http.MethodHead, e.objectURL("dir/a.txt"), nil)
	if resp.code != http.StatusOK || resp.length != int64(len(data)) {
		t.Errorf("HEAD: %d, length %d", resp.code, resp.length)
	}
	resp, body = e.request(http.MethodDelete, e.objectURL("dir/a.txt"), nil)
	if resp.code != http.StatusOK {
		t.Fatalf("DELETE: %d %s", resp.code, body)
	}
	if resp, _ = e.request(http.MethodGet, e.objectURL("dir/a.txt"), nil); resp.code != http.StatusNotFound {
		t.Errorf("GET after DELETE: %d", resp.code)
	}
	if resp, _ = e.request(http.MethodDelete, e.objectURL("dir/a.txt"), nil); resp.code != http.StatusNotFound {
		t.Errorf("second DELETE: %d", resp.code)
	}
}

func TestObjectChecksumRecorded(t *testing.T) {
	e := newObjectEnv(t)
	data := []byte("checked")
	resp, body := e.request(http.MethodPut, e.objectURL("c"), bytes.NewReader(data), wire.HeaderChecksum, strings.ToUpper(sha(data)))
	if resp.code != http.StatusCreated {
		t.Fatalf("PUT with the right checksum: %d %s", resp.code, body)
	}
	resp, _ = e.request(http.MethodHead, e.objectURL("c"), nil)
	got := resp.header.Get(wire.HeaderChecksum)
	if got == "" {
		t.Skip("the file system keeps no user extended attributes: checksums are not recorded")
	}
	if got != sha(data) {
		t.Errorf("HEAD checksum %s, want %s", got, sha(data))
	}
	// A file changed behind the agent's back no longer matches its record.
	if err := os.WriteFile(filepath.Join(e.root, "c"), []byte("changed!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if resp, _ = e.request(http.MethodHead, e.objectURL("c"), nil); resp.header.Get(wire.HeaderChecksum) != "" {
		t.Errorf("a stale checksum is answered: %s", resp.header.Get(wire.HeaderChecksum))
	}
}

func TestObjectPutRefusals(t *testing.T) {
	data := []byte("0123456789")
	cases := map[string]struct {
		object    string
		headers   []string
		configure func(*Options)
		free      int64
		before    []string // objects stored first, 10 bytes each
		wantCode  int
		wantInMsg string
	}{
		"dot-dot":            {object: "a/../../x", wantCode: 400, wantInMsg: ".."},
		"hidden":             {object: "a/.b.put-1.tmp", wantCode: 400, wantInMsg: "starting with"},
		"too long":           {object: strings.Repeat("n", wire.MaxObjectName+1), wantCode: 400, wantInMsg: "too long"},
		"too large":          {object: "big", configure: func(o *Options) { o.MaxObjectSize = 5 }, wantCode: 413, wantInMsg: "--max-object-size"},
		"checksum mismatch":  {object: "c", headers: []string{wire.HeaderChecksum, sha([]byte("other"))}, wantCode: 400, wantInMsg: "nothing was written"},
		"checksum malformed": {object: "c", headers: []string{wire.HeaderChecksum, "abc"}, wantCode: 400, wantInMsg: "64 hex"},
		"free-space floor":   {object: "f", free: (1 << 30) + 5, wantCode: 507, wantInMsg: "--min-free-bytes"},
		"quota":              {object: "q", configure: func(o *Options) { o.NamespaceQuota = 15 }, before: []string{"first"}, wantCode: 507, wantInMsg: "--namespace-quota"},
		"quota override": {object: "q", configure: func(o *Options) {
			o.NamespaceQuota = 1 << 20
			o.NamespaceQuotaOf = func(ns string) (int64, bool) { return 15, ns == "default" }
		}, before: []string{"first"}, wantCode: 507, wantInMsg: QuotaAnnotation},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var configure []func(*Options)
			if tc.configure != nil {
				configure = append(configure, tc.configure)
			}
			e := newObjectEnv(t, configure...)
			if tc.free > 0 {
				e.agent.objects.bounds.freeBytes = func() (int64, error) { return tc.free, nil }
			}
			for _, o := range tc.before {
				if resp, body := e.request(http.MethodPut, e.objectURL(o), bytes.NewReader(data)); resp.code != http.StatusCreated {
					t.Fatalf("PUT %s: %d %s", o, resp.code, body)
				}
			}
			want := files(t, e.base)
			// Unknown length too: the bound holds while the body streams.
			for _, body := range []io.Reader{bytes.NewReader(data), io.MultiReader(bytes.NewReader(data))} {
				resp, answer := e.request(http.MethodPut, e.objectURL(tc.object), body, tc.headers...)
				if resp.code != tc.wantCode || !strings.Contains(string(answer), tc.wantInMsg) {
					t.Errorf("PUT: %d %s, want %d naming %q", resp.code, answer, tc.wantCode, tc.wantInMsg)
				}
				if diff := cmp.Diff(want, files(t, e.base)); diff != "" {
					t.Errorf("a refused PUT left files (-before +after):\n%s", diff)
				}
			}
		})
	}
}

func TestObjectPutClientGone(t *testing.T) {
	e := newObjectEnv(t)
	putAndHangUp(t, e, "", e.base)
}

// putAndHangUp starts a PUT of "gone" (with query) through e, hangs up once a
// temporary file shows under writer (the data root of the node that writes
// it), and waits until neither e's data root nor writer's holds any file.
func putAndHangUp(t *testing.T, e *env, query, writer string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(e.objectURL("gone") + query)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n%s", u.RequestURI(), strings.Repeat("x", 5000))
	left := func() []string { return append(files(t, e.base), files(t, writer)...) }
	deadline := time.Now().Add(5 * time.Second)
	for len(files(t, writer)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the PUT never started writing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	conn.Close()
	for len(left()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("a PUT whose client went away left %v", left())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestObjectTempsSweptAtStart(t *testing.T) {
	e := newObjectEnv(t)
	left := filepath.Join(e.root, "d", ".x.put-0011.tmp")
	runs := filepath.Join(e.root, "d", ".y.some-run-uid.tmp")
	for _, f := range []string{left, runs} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := e.agent.opts
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("a crashed PUT's temporary file survived the start: %v", err)
	}
	if _, err := os.Stat(runs); err != nil {
		t.Errorf("a run's temporary file was swept by the object API: %v", err)
	}
}

func TestObjectConcurrentPuts(t *testing.T) {
	e := newObjectEnv(t)
	const writers = 8
	bodies := make([][]byte, writers)
	var wg sync.WaitGroup
	for i := range writers {
		bodies[i] = bytes.Repeat([]byte{byte('a' + i)}, 256<<10)
		wg.Go(func() {
			if resp, body := e.request(http.MethodPut, e.objectURL("same"), bytes.NewReader(bodies[i])); resp.code != http.StatusCreated {
				t.Errorf("PUT %d: %d %s", i, resp.code, body)
			}
		})
	}
	wg.Wait()
	_, got := e.request(http.MethodGet, e.objectURL("same"), nil)
	if len(got) != 256<<10 || !bytes.Equal(got, bytes.Repeat(got[:1], len(got))) {
		t.Errorf("the object is not one writer's whole body (%d bytes)", len(got))
	}
	if diff := cmp.Diff([]string{"default/same"}, files(t, e.base)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestObjectPutRacingDelete(t *testing.T) {
	e := newObjectEnv(t)
	data := bytes.Repeat([]byte("r"), 64<<10)
	for range 20 {
		var wg sync.WaitGroup
		wg.Go(func() { e.request(http.MethodPut, e.objectURL("race"), bytes.NewReader(data)) })
		wg.Go(func() { e.request(http.MethodDelete, e.objectURL("race"), nil) })
		wg.Wait()
		resp, got := e.request(http.MethodGet, e.objectURL("race"), nil)
		if resp.code == http.StatusOK && !bytes.Equal(got, data) {
			t.Fatalf("a partial object: %d bytes", len(got))
		}
		for _, f := range files(t, e.base) {
			if f != "default/race" {
				t.Fatalf("left behind: %s", f)
			}
		}
	}
}

func TestObjectDeletePrefixWhileReading(t *testing.T) {
	e := newObjectEnv(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	for _, o := range []string{"p/1", "p/2", "q"} {
		e.request(http.MethodPut, e.objectURL(o), bytes.NewReader(big))
	}
	resp, err := e.client.Get(e.objectURL("p/1"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, 1000)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	del, body := e.request(http.MethodDelete, e.objectURL("p/")+"?recursive=true", nil)
	if del.code != http.StatusOK || !strings.Contains(string(body), `"deleted":2`) {
		t.Fatalf("DELETE p/ recursively: %d %s", del.code, body)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(append(head, rest...), big) {
		t.Errorf("the reader lost its object to the DELETE: %v, %d bytes", err, len(head)+len(rest))
	}
	if diff := cmp.Diff([]string{"default/q"}, files(t, e.base)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestObjectRange(t *testing.T) {
	e := newObjectEnv(t)
	e.request(http.MethodPut, e.objectURL("r"), strings.NewReader("0123456789"))
	resp, body := e.request(http.MethodGet, e.objectURL("r"), nil, "Range", "bytes=2-5")
	if resp.code != http.StatusPartialContent || string(body) != "2345" {
		t.Errorf("Range 2-5: %d %q", resp.code, body)
	}
	resp, _ = e.request(http.MethodGet, e.objectURL("r"), nil, "Range", "bytes=20-")
	if resp.code != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("Range past the end: %d", resp.code)
	}
}

// list GETs a page and decodes it.
func (e *env) list(query string) wire.ObjectList {
	e.t.Helper()
	resp, body := e.request(http.MethodGet, e.listURL(query), nil)
	if resp.code != http.StatusOK {
		e.t.Fatalf("list %s: %d %s", query, resp.code, body)
	}
	var l wire.ObjectList
	if err := json.Unmarshal(body, &l); err != nil {
		e.t.Fatal(err)
	}
	return l
}

func names(l wire.ObjectList) []string {
	out := []string{}
	for _, it := range l.Items {
		out = append(out, it.Name)
	}
	return out
}

// listAllPages pages through the list with limit.
func (e *env) listAllPages(query string, limit int) []string {
	var all []string
	after := ""
	for range 100 {
		l := e.list(fmt.Sprintf("%s&limit=%d&after=%s", query, limit, after))
		all = append(all, names(l)...)
		all = append(all, l.Prefixes...)
		if l.Next == "" {
			return all
		}
		after = l.Next
	}
	e.t.Fatal("the list never ends")
	return nil
}

func TestObjectList(t *testing.T) {
	e := newObjectEnv(t)
	objects := []string{"a.txt", "a/b", "a/c/d", "b", "c/x", "c/y", "d"}
	for _, o := range objects {
		e.request(http.MethodPut, e.objectURL(o), strings.NewReader(o))
	}
	if diff := cmp.Diff(objects, names(e.list(""))); diff != "" {
		t.Errorf("whole list (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(objects, e.listAllPages("", 2)); diff != "" {
		t.Errorf("pages of 2 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a/b", "a/c/d"}, names(e.list("prefix=a/"))); diff != "" {
		t.Errorf("prefix a/ (-want +got):\n%s", diff)
	}
	l := e.list("delimiter=/")
	if diff := cmp.Diff(wire.ObjectList{Items: l.Items, Prefixes: []string{"a/", "c/"}}, l); diff != "" || len(l.Items) != 3 {
		t.Errorf("delimiter / (-want +got):\n%s\nitems %v", diff, names(l))
	}
	if diff := cmp.Diff([]string{"a.txt", "a/", "b", "c/", "d"}, e.listAllPages("delimiter=/", 1)); diff != "" {
		t.Errorf("delimited pages of 1 (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"limit=0", "limit=x", "limit=-3"} {
		resp, body := e.request(http.MethodGet, e.listURL(bad), nil)
		if resp.code != http.StatusBadRequest || !strings.Contains(string(body), "limit=") {
			t.Errorf("%s: %d %s", bad, resp.code, body)
		}
	}
	empty := e.url + wire.PathObjects + "nothing-here/"
	if resp, body := e.request(http.MethodGet, empty, nil); resp.code != http.StatusOK || !strings.Contains(string(body), `"items":[]`) {
		t.Errorf("a namespace with no data: %d %s", resp.code, body)
	}
}

func TestObjectVerbs(t *testing.T) {
	f := &rbac{allowed: map[string]map[string]bool{}}
	e := newObjectEnv(t, func(o *Options) { o.Access = f })
	e.token = "user"
	f.grant("user")
	cases := []struct {
		method, url, verb string
	}{
		{http.MethodPut, e.objectURL("o"), "create"},
		{http.MethodGet, e.objectURL("o"), "get"},
		{http.MethodHead, e.objectURL("o"), "get"},
		{http.MethodGet, e.listURL(""), "list"},
		{http.MethodDelete, e.objectURL("o"), "delete"},
	}
	for _, tc := range cases {
		req := dataAccess(tc.verb, "default")
		// HEAD comes after GET, already granted get.
		if !f.allowed["user"][req.String()] {
			if resp, _ := e.request(tc.method, tc.url, strings.NewReader("x")); resp.code != http.StatusForbidden {
				t.Errorf("%s %s without %s: %d", tc.method, tc.url, req, resp.code)
			}
		}
		f.grant("user", req)
		if resp, body := e.request(tc.method, tc.url, strings.NewReader("x")); resp.code >= 300 {
			t.Errorf("%s %s with %s: %d %s", tc.method, tc.url, req, resp.code, body)
		}
		if last := f.asked[len(f.asked)-1]; last != "user: "+req.String() {
			t.Errorf("%s asked %q, want %q", tc.method, last, req)
		}
	}
	e.token = ""
	if resp, _ := e.request(http.MethodGet, e.objectURL("o"), nil); resp.code != http.StatusUnauthorized {
		t.Errorf("no token: %d", resp.code)
	}
	if resp, _ := e.request(http.MethodPost, e.objectURL("o"), nil); resp.code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.code)
	}
}
