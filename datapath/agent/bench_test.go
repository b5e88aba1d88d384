package agent

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/loadgen"
)

// BenchmarkDataPath moves objects along the real path, client → agent →
// transformer → agent → client, on loopback, by every communicator, each
// against baselines that do the same work at the same concurrency in the
// same run:
//
//	bare       a client and a bare net/http echo (PUT, result = body)
//	chain      the same path built from bare parts: a TCP relay (io.Copy
//	           both ways) in place of the agent, the bare echo behind it
//	bare-get   a GET of the same file from net/http's file server (hpull's
//	           client GETs an object of the data root); chain-get relays it
//	bare-exec  the io transformer's command, run per object without mlkube
//	           (io runs the real io-shim binary serving `cat`;
//	           io-persistent the same shim with --persistent serving
//	           `loadgen cat-framed`, compared with per-object io and with
//	           the HTTP path it shares with hpush)
//	coder-ws   a WebSocket echo of coder/websocket, client and server
//	bare-ws    the same echo with mlkube's own WebSocket (internal/ws) on
//	           both ends, and the same in-flight window as ws-stream
//
//	go test -run '^$' -bench DataPath -benchtime 2s ./datapath/agent
//
// A row's name says its concurrency: -c8 is 8 clients, each with one object
// in flight; -c8w16 is 8 streaming clients with up to 16 objects in flight
// each. Objects up to 1 MiB are driven by benchClients clients; 64 MiB is one
// client with one object in flight, one stream. Every result is checked,
// length and content, on every row. Baselines run first in each size; each
// row reports its rate relative to its baselines (x-<baseline>: higher is
// better, 1 is as fast).
func BenchmarkDataPath(b *testing.B) {
	bins := ioShimBinaries(b)
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20, 64 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			results := map[string]float64{} // row name → ns/op
			for _, r := range benchRows(size) {
				b.Run(r.name(), func(b *testing.B) {
					nsPerOp := r.run(b, size, bins)
					results[r.name()] = nsPerOp
					for _, base := range r.bases {
						if ns, ok := results[base.name()]; ok {
							b.ReportMetric(ns/nsPerOp, "x-"+base.path)
						}
					}
				})
			}
		})
	}
}

// benchClients is how many clients drive objects smaller than streamSize.
const benchClients = 8

// streamSize is the size from which one object is one stream rather than
// one of many concurrent objects.
const streamSize = 64 << 20

// streamWindow is how many objects a streaming client keeps in flight below
// streamSize.
const streamWindow = 16

// benchRow is one path at one concurrency, and the rows it is compared to.
type benchRow struct {
	path    string
	clients int
	// window is the objects in flight per client; 0 for a client that
	// sends one object at a time over HTTP or exec.
	window int
	bases  []benchRow
}

func (r benchRow) name() string {
	if r.window == 0 {
		return fmt.Sprintf("%s-c%d", r.path, r.clients)
	}
	return fmt.Sprintf("%s-c%dw%d", r.path, r.clients, r.window)
}

// benchRows are the rows of size, each after its baselines.
func benchRows(size int) []benchRow {
	clients, window := benchClients, streamWindow
	if size >= streamSize {
		clients, window = 1, 1
	}
	at := func(path string, bases ...benchRow) benchRow {
		return benchRow{path: path, clients: clients, bases: bases}
	}
	streaming := func(path string, window int, bases ...benchRow) benchRow {
		return benchRow{path: path, clients: clients, window: window, bases: bases}
	}
	bare, chain := at("bare"), at("chain")
	hpush := at("hpush", bare, chain)
	bareGet, chainGet := at("bare-get"), at("chain-get")
	bareExec := at("bare-exec")
	perObject := at("io", bareExec)
	coderWS := streaming("coder-ws", window)
	bareWS := streaming("bare-ws", window, coderWS)
	rows := []benchRow{
		bare, chain, hpush, at("ws", bare, chain, hpush),
		bareGet, chainGet, at("hpull", bareGet, chainGet),
		bareExec, perObject, at("io-persistent", chain, hpush, perObject),
		coderWS, bareWS,
	}
	if window == 1 {
		// One object in flight per client, as hpush has.
		return append(rows, streaming("ws-stream", 1, bareWS, coderWS, hpush))
	}
	bareWS1 := streaming("bare-ws", 1)
	return append(rows,
		streaming("ws-stream", window, bareWS, coderWS),
		bareWS1, streaming("ws-stream", 1, bareWS1, hpush))
}

// run starts the servers of the row and drives b.N objects through them.
func (r benchRow) run(b *testing.B, size int, bins ioBinaries) float64 {
	payload := loadgen.Payload(size)
	put := func(url string) float64 {
		return runObjects(b, size, r.clients, httpClients(b, http.MethodPut, url, "", payload))
	}
	get := func(url string) float64 {
		return runObjects(b, size, r.clients, httpClients(b, http.MethodGet, url, "", payload))
	}
	switch r.path {
	case "bare":
		return put(bareEcho(b) + "/object")
	case "chain":
		return put(tcpRelay(b, strings.TrimPrefix(bareEcho(b), "http://")) + "/object")
	case "bare-get":
		return get(fileServer(b, payload) + "/object")
	case "chain-get":
		return get(tcpRelay(b, strings.TrimPrefix(fileServer(b, payload), "http://")) + "/object")
	case "bare-exec":
		return runObjects(b, size, r.clients, execClients(payload, ioCommand))
	case "io":
		e := newEnv(b)
		e.addTarget("cat", etlv1alpha1.CommIO, startIOShim(b, bins.shim(), r.clients, false, ioCommand))
		return put(e.transformURL("cat", "object", wire.Query{}))
	case "io-persistent":
		e := newEnv(b)
		cat := []string{bins.loadgen(), "cat-framed"}
		e.addTarget("cat", etlv1alpha1.CommIO, startIOShim(b, bins.shim(), r.clients, true, cat))
		return put(e.transformURL("cat", "object", wire.Query{}))
	case "hpull":
		e := newEnv(b)
		e.addTransform("echo", etlv1alpha1.CommHPull, "", echo)
		e.writeObject("object", payload)
		return get(e.transformURL("echo", "object", wire.Query{}))
	case "hpush", "ws":
		e := newEnv(b)
		e.addTransform("echo", etlv1alpha1.Communication(r.path), "", echo)
		return put(e.transformURL("echo", "object", wire.Query{}))
	case "ws-stream", "bare-ws", "coder-ws":
		return runWindowed(b, payload, r.clients, r.window, wsDialer(b, r.path))
	}
	b.Fatalf("no row %s", r.path)
	return 0
}

func sizeName(size int) string {
	if size >= 1<<20 {
		return fmt.Sprintf("%dMiB", size>>20)
	}
	return fmt.Sprintf("%dKiB", size>>10)
}

// runObjects drives b.N objects on clients goroutines, each with its own
// client from newClient, sending one object after the other, and returns the
// time per object. One client is one sequential stream.
func runObjects(b *testing.B, size, clients int, newClient func() func() error) float64 {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var next atomic.Int64
	b.ResetTimer()
	if _, err := loadgen.Objects(clients, func() bool { return next.Add(1) <= int64(b.N) }, newClient); err != nil {
		b.Error(err)
	}
	b.StopTimer()
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}

// httpClients makes clients for runObjects: each has its own connections
// and sends one object by method to url, with token as its bearer token
// when set, and payload as its body for a PUT. The result must be payload.
func httpClients(b *testing.B, method, url, token string, payload []byte) func() func() error {
	return func() func() error {
		t := newTransport()
		t.MaxIdleConnsPerHost = 4
		c := &http.Client{Transport: t}
		b.Cleanup(c.CloseIdleConnections)
		h := &loadgen.HTTPClient{C: c, Method: method, URL: url, Token: token, Payload: payload}
		return h.Do
	}
}

// bareEcho is a net/http server that copies the body back.
func bareEcho(b *testing.B) string {
	ts := httptest.NewServer(http.HandlerFunc(loadgen.Echo))
	b.Cleanup(ts.Close)
	return ts.URL
}

// fileServer serves data as /object from a file, as net/http serves files.
func fileServer(b *testing.B, data []byte) string {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "object"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(http.FileServer(http.Dir(dir)))
	b.Cleanup(ts.Close)
	return ts.URL
}

// addTarget adds the Transform default/name served at url. The agent sends a
// credential as in a cluster, so that its cost is measured; the bare servers
// behind url do not check it.
func (e *env) addTarget(name string, comm etlv1alpha1.Communication, url string) {
	e.resolver.mu.Lock()
	defer e.resolver.mu.Unlock()
	e.resolver.targets["default/"+name] = Target{
		Namespace: "default", Name: name, Communication: comm,
		ObjectTimeout: 10 * time.Second, URL: url, Token: benchToken,
	}
}

// benchToken has the length of a derived token: a key ID, a dot and 43 characters.
const benchToken = "k1.0123456789012345678901234567890123456789012"

// tcpRelay forwards every connection to backend (loadgen.Relay) and returns
// its URL.
func tcpRelay(b *testing.B, backend string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { loadgen.Relay(ln, backend); close(done) }()
	b.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String()
}
