package agent

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/noderun"
	"github.com/mlkube/mlkube/internal/bufpool"
)

// BenchmarkNodeRun runs a node's share of a TransformRun through an echo
// transformer (hpush to the SDK's transformer on loopback) against a plain
// Go loop measured in the same process on the same files with the same
// workers, doing per object what the run must: read the file, PUT it to the
// same transformer, write the answer to a temporary file, fsync it, rename
// it. The run adds its walk, journal, directory fsyncs and status.
//
//	go test -run '^$' -bench NodeRun -benchtime 1x ./datapath/agent
//
// Each dataset, 10,000 files of 4 KiB and 100 of 16 MiB, is scaled by
// MLKUBE_BENCH_RUN_SCALE (0.1 with -short). "run" reports its rate relative
// to the loop (x-loop: 1 is as fast) and its start-up latency, from the PUT
// to the first object's result in place (startup-ms).
func BenchmarkNodeRun(b *testing.B) {
	scale := 1.0
	if testing.Short() {
		scale = 0.1
	}
	if s, err := strconv.ParseFloat(os.Getenv("MLKUBE_BENCH_RUN_SCALE"), 64); err == nil && s > 0 {
		scale = s
	}
	for _, ds := range []struct {
		files, size int
		unit        string
	}{{10000, 4 << 10, "4KiB"}, {100, 16 << 20, "16MiB"}} {
		n := max(1, int(float64(ds.files)*scale))
		b.Run(fmt.Sprintf("%dx%s", n, ds.unit), func(b *testing.B) {
			e := newEnv(b)
			srv := e.addTransform("echo", etlv1alpha1.CommHPush, "", echo)
			names := benchFiles(e, n, ds.size)
			total := float64(n) * float64(ds.size)
			var loopNs float64
			// Every pass writes a destination of its own: a run of a name
			// and UID that ended only answers its status.
			pass := 0
			for _, path := range []string{"loop", "run"} {
				b.Run(path, func(b *testing.B) {
					var startup, elapsed time.Duration
					for range b.N {
						pass++
						dst := fmt.Sprintf("%s-%d", path, pass)
						start := time.Now()
						if path == "loop" {
							benchLoop(b, e, srv.URL, names, dst)
						} else {
							startup += benchRun(b, e, dst, n)
						}
						elapsed += time.Since(start)
						b.StopTimer()
						os.RemoveAll(filepath.Join(e.root, dst))
						b.StartTimer()
					}
					ns := float64(elapsed.Nanoseconds()) / float64(b.N)
					b.ReportMetric(float64(n)/(ns/1e9), "objects/s")
					b.ReportMetric(total/1e6/(ns/1e9), "MB/s")
					if path == "loop" {
						loopNs = ns
						return
					}
					b.ReportMetric(loopNs/ns, "x-loop")
					b.ReportMetric(float64(startup.Microseconds())/1e3/float64(b.N), "startup-ms")
				})
			}
		})
	}
}

// benchWorkers are the workers of both the run and the loop.
const benchWorkers = 8

// benchFiles writes n files of size bytes under raw/.
func benchFiles(e *env, n, size int) []string {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("raw/%05d", i)
		e.writeObject(names[i], data)
	}
	return names
}

// benchRun runs the share into dst to its end and returns the time from the
// PUT to the first result in place.
func benchRun(b *testing.B, e *env, dst string, n int) time.Duration {
	spec := prefixRun("echo", benchWorkers)
	spec.UID, spec.Destination.Prefix = "bench-"+dst, dst
	start := time.Now()
	if a, _ := e.putRun(dst, spec); a.status != http.StatusOK {
		b.Fatalf("PUT: %d %s", a.status, a.body)
	}
	run := e.agent.runs.Get(noderun.Key{Namespace: "default", Name: dst})
	for s := run.Status(); s.DoneObjects == 0 && s.Finished == nil; s = run.Status() {
		time.Sleep(20 * time.Microsecond)
	}
	startup := time.Since(start)
	<-run.Done()
	if s := run.Status(); s.Phase != etlv1alpha1.RunSucceeded || s.DoneObjects != int64(n) {
		b.Fatalf("run: %s %q, %d of %d done", s.Phase, s.Message, s.DoneObjects, n)
	}
	return startup
}

// benchLoop is the plain loop: each worker reads a file, PUTs it to the
// transformer, writes the answer to a temporary file beside its result,
// fsyncs and renames it.
func benchLoop(b *testing.B, e *env, transformer string, names []string, dst string) {
	client := &http.Client{Transport: newTransport()}
	defer client.CloseIdleConnections()
	dir := filepath.Join(e.root, dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	work := make(chan string)
	var wg sync.WaitGroup
	var failed sync.Once
	for range benchWorkers {
		wg.Go(func() {
			buf := make([]byte, bufpool.ObjectSize)
			for name := range work {
				if err := loopObject(client, transformer, e.root, name, filepath.Join(dir, filepath.Base(name)), buf); err != nil {
					failed.Do(func() { b.Error(err) })
				}
			}
		})
	}
	for _, name := range names {
		work <- name
	}
	close(work)
	wg.Wait()
}

func loopObject(client *http.Client, transformer, root, name, result string, buf []byte) error {
	in, err := os.Open(filepath.Join(root, name))
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPut, wire.ObjectURL(transformer, name, wire.Query{}), in)
	if err != nil {
		return err
	}
	req.ContentLength = fi.Size()
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	tmp := filepath.Join(filepath.Dir(result), "."+filepath.Base(result)+".tmp")
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(out, resp.Body, buf)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, result)
}
