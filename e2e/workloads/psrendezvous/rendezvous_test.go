package psrendezvous

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRendezvousSucceeds(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), safetyTimeout)
	defer cancel()
	topo := Topology{Servers: 2, Workers: 3}
	j := startJob(t, ctx, topo)
	j.wantSuccess(t)

	// Each node must show every interaction with every peer, in the formats the
	// e2e tests grep.
	want := map[string][]*regexp.Regexp{}
	add := func(node, format string, args ...any) {
		want[node] = append(want[node], logLine(node, format, args...))
	}
	add("scheduler", LogAllRegistered, 5, 2, 3)
	add("scheduler", LogAllDone, 5)
	for _, peer := range topo.PeerNames() {
		add("scheduler", LogSentServerList, peer)
		add("scheduler", LogDoneFrom, peer)
		add("scheduler", LogSentFinish, peer)
		add(peer, LogServerList, fmt.Sprintf("server-0 at %s, server-1 at %s", j.servers[0], j.servers[1]))
		add(peer, LogReportedDone)
		add(peer, LogFinishFrom)
	}
	for s, server := range topo.ServerNames() {
		add("scheduler", LogRegisteredServer, server, anyValue, j.servers[s])
		add(server, LogJoinedServer, j.scheduler, j.servers[s])
		add(server, LogAggregated, 3, ExpectedAggregate(3, s))
		for w, worker := range topo.WorkerNames() {
			add(server, LogPushFrom, worker, anyValue, PushValues(w, s))
			add(server, LogSentAggregate, worker)
			add(worker, LogPushed, server, j.servers[s])
			add(worker, LogAggregateOK, server, ExpectedAggregate(3, s))
		}
	}
	for _, worker := range topo.WorkerNames() {
		add("scheduler", LogRegistered, worker, anyValue)
		add(worker, LogJoined, j.scheduler)
	}
	for node, lines := range want {
		log := j.logs[node].String()
		for _, line := range lines {
			if !line.MatchString(log) {
				t.Errorf("%s's log has no line matching %s; its log:\n%s", node, line, log)
			}
		}
	}
}

func TestMissingWorkerFailsEveryone(t *testing.T) {
	// The test's own deadline fires once every present node heard from the
	// scheduler that only worker-2 is missing: a fixed timeout would make the
	// missing lists depend on how fast this machine is.
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	errDeadline := errors.New("test deadline")
	topo := Topology{Servers: 2, Workers: 3}
	j := startJob(t, ctx, topo, "worker-2")
	progress := fmt.Sprintf(LogProgress, phaseRegistration, "worker-2")
	settled := map[string]string{}
	for _, node := range []string{"server-0", "server-1", "worker-0", "worker-1"} {
		settled[node] = progress
	}
	j.waitForLog(t, settled)
	cancel(errDeadline)

	errs := j.wait()
	if len(errs) != 5 {
		t.Fatalf("got results of %d nodes, want 5", len(errs))
	}
	for node, err := range errs {
		var missing *MissingError
		if !errors.As(err, &missing) {
			t.Errorf("%s: got error %v, want a MissingError", node, err)
			continue
		}
		if diff := cmp.Diff([]string{"worker-2"}, missing.Missing); diff != "" {
			t.Errorf("%s: missing peers (-want +got):\n%s", node, diff)
		}
		// A node learns of the deadline from its own context or from the
		// scheduler's abort, whichever comes first.
		prefix := node + ": missing worker-2 (waiting for registration: "
		if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.HasSuffix(msg, "test deadline)") {
			t.Errorf("%s: got %q, want %q…\"test deadline)\"; its log:\n%s", node, msg, prefix, j.logs[node])
		}
	}
}

func TestWorkerWithoutSchedulerFailsAtDeadline(t *testing.T) {
	// A port that was just free and is closed again: nobody answers there.
	ln := listenLoopback(t)
	addr := ln.Addr().String()
	ln.Close()
	cfg := Config{Role: RoleWorker, Topology: Topology{Servers: 1, Workers: 1}, SchedulerAddr: addr, Deadline: 200 * time.Millisecond}
	var log syncBuffer
	err := Run(t.Context(), cfg, &log)
	want := "worker-0: missing scheduler (connecting to scheduler at " + addr + ": dialing " + addr + ": deadline 200ms exceeded"
	var missing *MissingError
	if !errors.As(err, &missing) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want a MissingError starting %q", err, want)
	}
	if want := "worker-0: " + addr + " not reachable yet"; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
}

func TestSchedulerRejectsStranger(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ln := listenLoopback(t)
	var log syncBuffer
	done := make(chan error, 1)
	go func() { done <- RunScheduler(ctx, ln, Topology{Servers: 1, Workers: 1}, &log) }()

	for _, msg := range []Message{
		{Type: MsgRegister, Node: "worker-7"},
		{Type: MsgRegister, Node: "server-0"}, // no push address
		{Type: MsgDone, Node: "worker-0"},     // never registered
	} {
		if got := fakeNode(t, ln.Addr().String(), msg); got.Type != MsgReject || got.Reason == "" {
			t.Errorf("%+v: got %+v, want a reject with a reason", msg, got)
		}
	}
	cancel()
	var missing *MissingError
	if err := <-done; !errors.As(err, &missing) || !cmp.Equal(missing.Missing, []string{"server-0", "worker-0"}) {
		t.Errorf("got %v, want server-0 and worker-0 missing: strangers do not count", err)
	}
	if want := "scheduler: rejected worker-7: not a peer of this job"; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, log.String())
	}
}

func TestRecreatedWorkerRejoins(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), safetyTimeout)
	defer cancel()
	topo := Topology{Servers: 1, Workers: 2}
	j := startScheduler(t, ctx, topo)
	// The first pod of worker-1 registers, then hangs: its connection stays open
	// as a half-open one would after a node failure.
	fakeNode(t, j.scheduler, Message{Type: MsgRegister, Node: "worker-1"})
	j.startServer(t, 0)
	j.startWorker(0)
	// Everyone registered, so the start went out; worker-0 now waits for the
	// server, which waits for worker-1's push.
	j.waitForLog(t, map[string]string{"worker-0": "worker-0: got server list"})
	j.startWorker(1) // the recreated pod
	j.wantSuccess(t)

	// The server list went to both pods of worker-1: the stale one got it with
	// the start, the recreated one on registering.
	log := j.logs["scheduler"].String()
	for line, want := range map[*regexp.Regexp]int{
		logLine("scheduler", LogReregistered, "worker-1"):   1,
		logLine("scheduler", LogSentServerList, "worker-1"): 2,
	} {
		if got := len(line.FindAllString(log, -1)); got != want {
			t.Errorf("scheduler logged %s %d times, want %d; log:\n%s", line, got, want, log)
		}
	}
}

func TestWorkerChecksServers(t *testing.T) {
	for name, tc := range map[string]struct {
		answer      func(c *Conn) // how the fake server-0 answers a push
		wantMissing bool          // server-0 missing, rather than a failed check
		wantErr     string
	}{
		"wrong sum": {
			answer:  func(c *Conn) { c.Send(Message{Type: MsgAggregate, Values: []int64{1, 2, 3}}) },
			wantErr: "worker-0: server-0 at ADDR: bad answer: aggregate [1 2 3], want [3 2 3]",
		},
		"rejected": {
			answer:  func(c *Conn) { c.Send(Message{Type: MsgReject, Reason: "not a worker"}) },
			wantErr: "worker-0: server-0 at ADDR: bad answer: push rejected: not a worker",
		},
		"gone": {
			answer:      func(c *Conn) {},
			wantMissing: true,
			wantErr:     "worker-0: missing server-0 (waiting for aggregates: server-0 at ADDR: connection closed by peer)",
		},
	} {
		t.Run(name, func(t *testing.T) {
			ln := listenLoopback(t)
			defer ln.Close()
			go func() {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				c := NewConn(nc)
				defer c.Close()
				if _, err := c.Recv(); err == nil {
					tc.answer(c)
				}
			}()
			var dialer net.Dialer
			var log syncBuffer
			w := &worker{node: "worker-0", topo: Topology{Servers: 1, Workers: 2}, dial: dialer.DialContext, log: nodeLogger(&log, "worker-0")}
			err := w.pushAll(t.Context(), []ServerAddress{{Node: "server-0", Addr: ln.Addr().String()}})
			var missing *MissingError
			if got := errors.As(err, &missing); got != tc.wantMissing {
				t.Errorf("got %v: MissingError is %v, want %v", err, got, tc.wantMissing)
			}
			if want := strings.ReplaceAll(tc.wantErr, "ADDR", ln.Addr().String()); err == nil || err.Error() != want {
				t.Errorf("got error %v, want %q", err, want)
			}
		})
	}
}
