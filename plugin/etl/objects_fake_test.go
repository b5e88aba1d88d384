package etl

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

// fakeAgent serves the object API of api/wire/objects.go over a map, for namespace default: the
// token of ServiceAccount mlkube-cli may do everything, viewer may read, loader may use no
// Transform, any other is refused; no one may use the Transform secret. Every object is on node-a; /v1/transform answers what it was
// asked: "METHOD pipeline(args) object: " and the object's bytes (GET) or the body (PUT).
type fakeAgent struct {
	mu       sync.Mutex
	objects  map[string][]byte
	pageSize int
	// failAfter, when above zero, is how many PUTs succeed before every PUT is refused with 507.
	failAfter int
	// corrupt names an object whose GET announces a checksum its bytes do not have.
	corrupt                   string
	puts, gets, inflight, max int
}

func newFakeAgent(t *testing.T) (*fakeAgent, string) {
	a := &fakeAgent{objects: map[string][]byte{}, pageSize: wire.MaxListLimit}
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return a, srv.URL
}

// fakeModified is when every object was written: ten minutes before the test clock.
var fakeModified = clitest.Now.Add(-10 * time.Minute)

func checksumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (a *fakeAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.inflight++
	a.max = max(a.max, a.inflight)
	a.mu.Unlock()
	time.Sleep(time.Millisecond) // so that parallel requests overlap
	defer func() { a.mu.Lock(); a.inflight--; a.mu.Unlock() }()
	write := r.Method == http.MethodPut || r.Method == http.MethodDelete
	switch tok := r.Header.Get("Authorization"); {
	case tok == "Bearer token-of-default:viewer" && write && !strings.HasPrefix(r.URL.Path, wire.PathTransform):
		http.Error(w, "viewer may not "+r.Method, http.StatusForbidden)
		return
	case tok == "Bearer token-of-default:loader":
		http.Error(w, "loader may not use transforms", http.StatusForbidden)
		return
	case tok != "Bearer token-of-default:mlkube-cli" && tok != "Bearer token-of-default:viewer":
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), wire.PathTransform+"default/"); ok {
		pipeline, obj, _ := strings.Cut(rest, "/")
		pipeline, _ = url.PathUnescape(pipeline)
		name, _ := wire.ParseObjectPath("/" + obj)
		if pipeline == "secret" {
			http.Error(w, "no binding lets "+r.Header.Get("Authorization")[len("Bearer token-of-"):]+" use transforms secret", http.StatusForbidden)
			return
		}
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		defer a.mu.Unlock()
		if r.Method == http.MethodGet {
			stored, ok := a.objects[name]
			if !ok {
				http.Error(w, "no such object", http.StatusNotFound)
				return
			}
			body = stored
		}
		io.WriteString(w, r.Method+" "+pipeline+"("+r.URL.Query().Get(wire.QueryArgs)+") "+name+": "+string(body))
		return
	}
	if store, ok := strings.CutPrefix(r.URL.EscapedPath(), wire.PathStores+"default/"); ok {
		a.storeList(w, r, strings.TrimSuffix(store, "/"))
		return
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), wire.PathObjects+"default")
	if !ok {
		http.NotFound(w, r)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if rest == "/" {
		a.list(w, r)
		return
	}
	name, err := wire.ParseObjectPath(rest)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.object(w, r, name)
}

func (a *fakeAgent) object(w http.ResponseWriter, r *http.Request, name string) {
	switch r.Method {
	case http.MethodPut:
		if a.failAfter > 0 && a.puts >= a.failAfter {
			http.Error(w, "disk full", http.StatusInsufficientStorage)
			return
		}
		b, _ := io.ReadAll(r.Body)
		if sum := r.Header.Get(wire.HeaderChecksum); sum != checksumOf(b) || r.ContentLength != int64(len(b)) {
			http.Error(w, "checksum "+sum+" or length "+strconv.FormatInt(r.ContentLength, 10)+" does not match", http.StatusBadRequest)
			return
		}
		a.puts++
		a.objects[name] = b
	case http.MethodDelete:
		if r.URL.Query().Get(wire.QueryRecursive) == "true" {
			for n := range a.objects {
				if strings.HasPrefix(n, name) {
					delete(a.objects, n)
				}
			}
			return
		}
		if _, ok := a.objects[name]; !ok {
			http.Error(w, "no such object", http.StatusNotFound)
			return
		}
		delete(a.objects, name)
	default:
		b, ok := a.objects[name]
		if !ok {
			http.Error(w, "no such object", http.StatusNotFound)
			return
		}
		sum := checksumOf(b)
		if name == a.corrupt {
			sum = checksumOf(append(b, '!'))
		}
		w.Header().Set(wire.HeaderChecksum, sum)
		w.Header().Set(wire.HeaderNode, "node-a")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if r.Method == http.MethodGet {
			a.gets++
			w.Write(b)
		}
	}
}

// list answers one page: the objects under prefix after after, those below the delimiter grouped.
// storeList lists the ObjectStore raw, which holds the agent's objects; the namespace has no
// ObjectStore gone, may not get locked, and down cannot be reached.
func (a *fakeAgent) storeList(w http.ResponseWriter, r *http.Request, store string) {
	switch store {
	case "raw":
		a.mu.Lock()
		defer a.mu.Unlock()
		a.list(w, r)
	case "locked":
		http.Error(w, "may not get objectstores.etl.mlkube.io locked", http.StatusForbidden)
	case "down":
		http.Error(w, "ObjectStore down (bucket b at http://s3): the endpoint cannot be reached", http.StatusBadGateway)
	default:
		http.Error(w, "namespace default has no ObjectStore "+store, http.StatusNotFound)
	}
}

func (a *fakeAgent) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	prefix, delim, after := q.Get(wire.QueryPrefix), q.Get(wire.QueryDelimiter), q.Get(wire.QueryAfter)
	type entry struct {
		key    string
		prefix bool
	}
	var entries []entry
	for name := range a.objects {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if i := strings.Index(rest, delim); delim != "" && i >= 0 {
			entries = append(entries, entry{prefix + rest[:i+len(delim)], true})
		} else {
			entries = append(entries, entry{name, false})
		}
	}
	slices.SortFunc(entries, func(x, y entry) int { return cmp.Compare(x.key, y.key) })
	entries = slices.Compact(entries)
	var page wire.ObjectList
	page.Items = []wire.ObjectInfo{}
	for _, e := range entries {
		if e.key <= after {
			continue
		}
		if len(page.Items)+len(page.Prefixes) == a.pageSize {
			page.Next = after
			break
		}
		after = e.key
		if e.prefix {
			page.Prefixes = append(page.Prefixes, e.key)
			continue
		}
		b := a.objects[e.key]
		page.Items = append(page.Items, wire.ObjectInfo{Name: e.key, Size: int64(len(b)), Modified: fakeModified,
			Checksum: checksumOf(b), Node: "node-a"})
	}
	json.NewEncoder(w).Encode(page)
}

// recordingForwarder reaches the fake agent for every node, recording the nodes asked for.
type recordingForwarder struct {
	url   string
	nodes *[]string
}

func (f recordingForwarder) Forward(_ context.Context, node string) (string, func(), error) {
	*f.nodes = append(*f.nodes, node)
	return f.url, func() {}, nil
}

// runObjects runs kubectl etl with args against the fake agent at url, returning the environment
// with its output, the exit code and the nodes port-forwarded to ("" for any).
func runObjects(t *testing.T, url, stdin string, args ...string) (*clitest.Env, int, []string) {
	t.Helper()
	return runObjectsWith(t, url, stdin, nil, args...)
}

// runObjectsWith is runObjects with the objects objs (Transforms) on the API server.
func runObjectsWith(t *testing.T, url, stdin string, objs []client.Object, args ...string) (*clitest.Env, int, []string) {
	t.Helper()
	env := clitest.NewEnv(NewScheme(), objs)
	env.Stdin.WriteString(stdin)
	var nodes []string
	dp := func() (TokenIssuer, AgentForwarder, *http.Client, error) {
		return stubDataPath{url}, recordingForwarder{url, &nodes}, dataPathClient(), nil
	}
	code := env.Run(cli.NewRoot(Plugin, env.Env, commands(env.Env, dp)...), args...)
	return env, code, nodes
}
