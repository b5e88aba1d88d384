package psrendezvous

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// safetyTimeout only keeps a broken test from hanging; no test relies on it.
const safetyTimeout = 30 * time.Second

// syncBuffer is a log a test can read while the node still writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// job runs the nodes of a dist job in this process, on 127.0.0.1.
type job struct {
	ctx       context.Context
	topo      Topology
	scheduler string   // the scheduler's address
	servers   []string // server i's push address, once started
	logs      map[string]*syncBuffer
	errs      map[string]error
	mu        sync.Mutex
	wg        sync.WaitGroup
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// startJob starts every node of topo except the absent ones.
func startJob(t *testing.T, ctx context.Context, topo Topology, absent ...string) *job {
	t.Helper()
	j := startScheduler(t, ctx, topo)
	for i := range topo.Servers {
		j.startServer(t, i)
	}
	for i := range topo.Workers {
		if !slices.Contains(absent, NodeName(RoleWorker, i)) {
			j.startWorker(i)
		}
	}
	return j
}

// startScheduler starts a job's scheduler only.
func startScheduler(t *testing.T, ctx context.Context, topo Topology) *job {
	t.Helper()
	j := &job{ctx: ctx, topo: topo, logs: map[string]*syncBuffer{}, errs: map[string]error{}}
	ln := listenLoopback(t)
	j.scheduler = ln.Addr().String()
	j.run(NodeName(RoleScheduler, 0), func(log *syncBuffer) error {
		return RunScheduler(ctx, ln, topo, log)
	})
	return j
}

func (j *job) startServer(t *testing.T, i int) {
	ln := listenLoopback(t)
	j.servers = append(j.servers, ln.Addr().String())
	var dialer net.Dialer
	j.run(NodeName(RoleServer, i), func(log *syncBuffer) error {
		return RunServer(j.ctx, ln, dialer.DialContext, j.scheduler, i, j.topo, log)
	})
}

func (j *job) startWorker(i int) {
	var dialer net.Dialer
	j.run(NodeName(RoleWorker, i), func(log *syncBuffer) error {
		return RunWorker(j.ctx, dialer.DialContext, j.scheduler, i, j.topo, log)
	})
}

func (j *job) run(node string, run func(*syncBuffer) error) {
	log := &syncBuffer{}
	j.logs[node] = log
	j.wg.Go(func() {
		err := run(log)
		j.mu.Lock()
		defer j.mu.Unlock()
		j.errs[node] = err
	})
}

// wantSuccess fails the test unless every node succeeded.
func (j *job) wantSuccess(t *testing.T) {
	t.Helper()
	for node, err := range j.wait() {
		if err != nil {
			t.Errorf("%s failed: %v\nits log:\n%s", node, err, j.logs[node])
		}
	}
}

// wait returns every started node's error once all returned.
func (j *job) wait() map[string]error {
	j.wg.Wait()
	return j.errs
}

// waitForLog polls until every node's log holds its line.
func (j *job) waitForLog(t *testing.T, want map[string]string) {
	t.Helper()
	for node, line := range want {
		waitForLine(t, j.logs[node], line)
	}
}

// waitForLine polls until log holds line, or fails the test.
func waitForLine(t *testing.T, log *syncBuffer, line string) {
	t.Helper()
	deadline := time.Now().Add(safetyTimeout)
	for !strings.Contains(log.String(), line) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never logged; log:\n%s", line, log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// anyValue stands for a value a test cannot know, such as a peer's source port.
const anyValue = "\x00"

// logLine matches one whole log line of node; anyValue arguments match any word.
func logLine(node, format string, args ...any) *regexp.Regexp {
	quoted := regexp.QuoteMeta(node + ": " + fmt.Sprintf(format, args...))
	return regexp.MustCompile("(?m)^" + strings.ReplaceAll(quoted, anyValue, `\S+`) + "$")
}

// fakeNode sends msg to the scheduler over a raw connection, kept open until the
// test ends, and returns the scheduler's first answer, so msg is known to be
// processed.
func fakeNode(t *testing.T, schedulerAddr string, msg Message) Message {
	t.Helper()
	nc, err := net.Dial("tcp", schedulerAddr)
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(nc)
	t.Cleanup(func() { c.Close() })
	if err := c.Send(msg); err != nil {
		t.Fatal(err)
	}
	answer, err := c.Recv()
	if err != nil {
		t.Fatal(err)
	}
	return answer
}
