package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/wire"
)

// batchEntry is one object of a batch answer.
type batchEntry struct {
	Status int
	Name   string
	Data   string
}

func (e *env) batchURL() string {
	return e.url + wire.PathObjects + "default/?" + wire.QueryBatch + "=true"
}

// batch asks for names in one batch read and returns the answer's entries; it fails the test
// unless the agent answered 200 with a well-formed body.
func (e *env) batch(names ...string) []batchEntry {
	e.t.Helper()
	body, err := json.Marshal(wire.BatchRequest{Objects: names})
	if err != nil {
		e.t.Fatal(err)
	}
	resp, data := e.request(http.MethodPost, e.batchURL(), bytes.NewReader(body))
	if resp.code != http.StatusOK || resp.header.Get("Content-Type") != wire.ContentTypeBatch {
		e.t.Fatalf("batch: %d %s %.200s", resp.code, resp.header.Get("Content-Type"), data)
	}
	entries, err := parseBatch(data)
	if err != nil {
		e.t.Fatal(err)
	}
	return entries
}

func parseBatch(b []byte) ([]batchEntry, error) {
	var out []batchEntry
	for len(b) > 0 {
		if len(b) < wire.BatchHeaderSize {
			return out, fmt.Errorf("%d bytes left, short of a header", len(b))
		}
		code, nameLen, size := wire.ParseBatchHeader(b)
		b = b[wire.BatchHeaderSize:]
		if uint64(len(b)) < uint64(nameLen)+size {
			return out, fmt.Errorf("entry of %d+%d bytes, %d left", nameLen, size, len(b))
		}
		out = append(out, batchEntry{Status: code, Name: string(b[:nameLen]), Data: string(b[nameLen : uint64(nameLen)+size])})
		b = b[uint64(nameLen)+size:]
	}
	return out, nil
}

func TestObjectBatchReadsThisNodesObjectsInOrder(t *testing.T) {
	e := newObjectEnv(t)
	// c is larger than the answer's write buffer: it is written in several pieces.
	objects := map[string]string{"a": strings.Repeat("a", 4096), "b": "", "dir/c": strings.Repeat("0123456789", 20000)}
	for name, data := range objects {
		if resp, body := e.request(http.MethodPut, e.objectURL(name), strings.NewReader(data)); resp.code != http.StatusCreated {
			t.Fatalf("PUT %s: %d %s", name, resp.code, body)
		}
	}
	got := e.batch("dir/c", "a", "missing", "b", "a")
	if len(got) == 5 && got[2].Status == http.StatusNotFound && strings.Contains(got[2].Data, "missing") {
		got[2].Data = "" // the message is the agent's; that it names the object is what counts
	}
	want := []batchEntry{
		{http.StatusOK, "dir/c", objects["dir/c"]}, {http.StatusOK, "a", objects["a"]},
		{http.StatusNotFound, "missing", ""}, {http.StatusOK, "b", ""}, {http.StatusOK, "a", objects["a"]},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batch answer (-want +got):\n%.2000s", diff)
	}
}

func TestObjectBatchRefusals(t *testing.T) {
	e := newObjectEnv(t)
	names := func(n int) string {
		b, _ := json.Marshal(wire.BatchRequest{Objects: strings.Split(strings.Repeat("o,", n-1)+"o", ",")})
		return string(b)
	}
	cases := map[string]struct {
		body, want string
		code       int
	}{
		"not JSON":       {`x`, `want {"objects": ["name", ...]}`, http.StatusBadRequest},
		"unknown field":  {`{"names": ["a"]}`, `unknown field "names"`, http.StatusBadRequest},
		"no objects":     {`{"objects": []}`, "objects is empty; name at least one object", http.StatusBadRequest},
		"too many":       {names(wire.MaxBatchObjects + 1), "1001 objects are over the limit of 1000; ask for fewer", http.StatusBadRequest},
		"escape":         {`{"objects": ["a", "../x"]}`, "objects[1]: object \"../x\" contains .. as a path element", http.StatusBadRequest},
		"hidden":         {`{"objects": [".journal/x"]}`, "objects[0]: object \".journal/x\" has a segment starting with", http.StatusBadRequest},
		"absolute":       {`{"objects": ["/etc/passwd"]}`, "objects[0]: object \"/etc/passwd\" is an absolute path", http.StatusBadRequest},
		"too large body": {`{"objects": ["` + strings.Repeat("a", wire.MaxBatchRequestBytes) + `"]}`, "a batch request of over 1048576 bytes", http.StatusRequestEntityTooLarge},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resp, body := e.request(http.MethodPost, e.batchURL(), strings.NewReader(tc.body))
			var answer Error
			if err := json.Unmarshal(body, &answer); err != nil || resp.code != tc.code || !strings.Contains(answer.Error, tc.want) {
				t.Errorf("%d %.300s; want %d with %q", resp.code, body, tc.code, tc.want)
			}
		})
	}
	if resp, _ := e.request(http.MethodPost, e.listURL(""), strings.NewReader(`{"objects": ["a"]}`)); resp.code != http.StatusMethodNotAllowed {
		t.Errorf("POST without ?%s=true: %d", wire.QueryBatch, resp.code)
	}
}

func TestObjectBatchNeedsGet(t *testing.T) {
	f := &rbac{allowed: map[string]map[string]bool{}}
	e := newObjectEnv(t, func(o *Options) { o.Access = f })
	e.token = "user"
	f.grant("user", dataAccess("list", "default"))
	body := `{"objects": ["a"]}`
	if resp, _ := e.request(http.MethodPost, e.batchURL(), strings.NewReader(body)); resp.code != http.StatusForbidden {
		t.Errorf("batch with list only: %d", resp.code)
	}
	f.grant("user", dataAccess("get", "default"))
	if resp, data := e.request(http.MethodPost, e.batchURL(), strings.NewReader(body)); resp.code != http.StatusOK {
		t.Errorf("batch with get: %d %s", resp.code, data)
	}
	if last, want := f.asked[len(f.asked)-1], "user: "+dataAccess("get", "default").String(); last != want {
		t.Errorf("batch asked %q, want %q", last, want)
	}
}
