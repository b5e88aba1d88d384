package agent

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// BenchmarkDataPath moves objects along the real path, client → agent →
// transformer (the SDK's echo) → agent → client, on loopback, by every
// communicator, and along two baselines measured in the same run:
//
//	bare   a client and a bare net/http echo
//	chain  the same path built from bare parts: a TCP relay (io.Copy both
//	       ways) in place of the agent, the bare echo in place of the
//	       transformer
//
//	go test -run '^$' -bench DataPath -benchtime 2s ./controller/datapath/agent
//
// The baselines run first in each size; every agent result reports its rate
// relative to them (x-chain, x-bare: higher is better, 1 is as fast as the
// baseline) and ws also relative to hpush (x-hpush).
//
// Objects of 4 KiB to 1 MiB are driven by benchParallelism client goroutines
// per CPU (b.RunParallel), each sending one object after the other on its
// own keep-alive connection (one HTTP exchange per object with the agent):
// a node's clients are concurrent, and the ws pool pipelines their objects
// over its persistent connections. ws-stream is the ws communicator driven
// by streaming clients (PathStream): each client goroutine keeps up to
// streamWindow objects in flight on one WebSocket to the agent, which
// pipelines them over its pool, so no hop pays a per-object HTTP exchange.
// The 64 MiB object is a single stream (one object on one stream). hpull is driven the way its clients use it: a
// GET of an object in the data root, which the transformer fetches from the
// agent as an in-flight capability.
func BenchmarkDataPath(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20, 64 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			results := map[string]float64{} // path → ns/op
			for _, path := range []string{"bare", "chain", "hpush", "hpull", "io", "ws", "ws-stream"} {
				b.Run(path, func(b *testing.B) {
					var nsPerOp float64
					if path == "ws-stream" {
						nsPerOp = runStream(b, size)
					} else {
						nsPerOp = runObjects(b, size, setupPath(b, path, size))
					}
					results[path] = nsPerOp
					if base, ok := results["chain"]; ok && path != "chain" {
						b.ReportMetric(base/nsPerOp, "x-chain")
					}
					if base, ok := results["bare"]; ok && path != "bare" {
						b.ReportMetric(base/nsPerOp, "x-bare")
					}
					if base, ok := results["hpush"]; ok && strings.HasPrefix(path, "ws") {
						b.ReportMetric(base/nsPerOp, "x-hpush")
					}
				})
			}
		})
	}
}

// benchParallelism is the number of client goroutines per CPU.
const benchParallelism = 4

// streamSize is the size from which one object is one stream rather than
// one of many concurrent objects.
const streamSize = 64 << 20

func sizeName(size int) string {
	if size >= 1<<20 {
		return fmt.Sprintf("%dMiB", size>>20)
	}
	return fmt.Sprintf("%dKiB", size>>10)
}

// runObjects runs do b.N times and returns the time per object.
func runObjects(b *testing.B, size int, do func(c *http.Client) error) float64 {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	if size >= streamSize {
		c := benchClient()
		defer c.CloseIdleConnections()
		for b.Loop() {
			if err := do(c); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism(benchParallelism)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			c := benchClient()
			defer c.CloseIdleConnections()
			for pb.Next() {
				if err := do(c); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.StopTimer()
	elapsed := b.Elapsed()
	return float64(elapsed.Nanoseconds()) / float64(b.N)
}

// benchClient is one client with its own connections.
func benchClient() *http.Client {
	t := newTransport()
	t.MaxIdleConnsPerHost = 4
	return &http.Client{Transport: t}
}

// setupPath starts the servers of path and returns one object's round trip.
func setupPath(b *testing.B, path string, size int) func(c *http.Client) error {
	payload := transformertest.Object{Size: size}.Bytes()
	put := func(url string) func(c *http.Client) error {
		return func(c *http.Client) error {
			return roundTrip(c, http.MethodPut, url, "", payload)
		}
	}
	switch path {
	case "bare":
		echo := bareEcho(b)
		return put(echo + "/object")
	case "chain":
		echo := bareEcho(b)
		return put(tcpRelay(b, echo[len("http://"):]) + "/object")
	}
	e := newEnv(b)
	comm := etlv1alpha1.Communication(path)
	e.addTransform("echo", comm, "", echo)
	if comm == etlv1alpha1.CommHPull {
		e.writeObject("object", payload)
		url := e.transformURL("echo", "object", wire.Query{})
		return func(c *http.Client) error { return roundTrip(c, http.MethodGet, url, "", nil) }
	}
	return put(e.transformURL("echo", "object", wire.Query{}))
}

// roundTrip sends one object, with token as its bearer token when set, and reads the result to
// its end.
func roundTrip(c *http.Client, method, url, token string, payload []byte) error {
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && (resp.StatusCode != http.StatusOK || (payload != nil && n != int64(len(payload)))) {
		err = fmt.Errorf("%s %s: status %d, %d bytes", method, url, resp.StatusCode, n)
	}
	return err
}

// bareEcho is a net/http server that copies the body back.
func bareEcho(b *testing.B) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		io.Copy(w, r.Body)
	}))
	b.Cleanup(ts.Close)
	return ts.URL
}

// tcpRelay forwards every connection to backend with io.Copy both ways
// (splice(2) on Linux) and returns its URL.
func tcpRelay(b *testing.B, backend string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	b.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, in)
			mu.Unlock()
			wg.Go(func() { relay(in, backend) })
		}
	})
	return "http://" + ln.Addr().String()
}

func relay(in net.Conn, backend string) {
	defer in.Close()
	out, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(out, in)
		out.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(in, out)
	in.(*net.TCPConn).CloseWrite()
	<-done
}

// streamWindow is how many objects a streaming client keeps in flight.
const streamWindow = 16

// runStream drives PathStream: every client goroutine sends objects without
// waiting, up to streamWindow unanswered, and a reader takes the answers.
func runStream(b *testing.B, size int) float64 {
	e := newEnv(b)
	e.addTransform("echo", etlv1alpha1.CommWS, "", echo)
	payload := transformertest.Object{Size: size}.Bytes()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	parallelism, windowSize := benchParallelism, streamWindow
	if size >= streamSize {
		// One stream, and one more object ready behind the one in flight:
		// a deeper window would only queue objects past their timeout.
		parallelism, windowSize = 1, 2
	}
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := dialStream(b, e, "echo")
		window := make(chan struct{}, windowSize)
		failed := make(chan struct{})
		var done atomic.Bool
		go func() {
			for {
				if err := c.receive(io.Discard); err != nil {
					if !done.Load() {
						b.Error(err)
					}
					close(failed)
					return
				}
				<-window
			}
		}()
		acquire := func() bool {
			select {
			case window <- struct{}{}:
				return true
			case <-failed:
				return false
			}
		}
		for pb.Next() {
			if !acquire() {
				return
			}
			if err := c.send("object", "", payload); err != nil {
				b.Error(err)
				return
			}
		}
		// Every answer is in once the whole window is free again.
		for range windowSize {
			if !acquire() {
				return
			}
		}
		done.Store(true)
		c.conn.CloseNow()
		<-failed
	})
	b.StopTimer()
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}
