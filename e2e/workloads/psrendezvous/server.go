package psrendezvous

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
)

// RunServer serves pushes on ln and takes part in the rendezvous run by the
// scheduler at schedulerAddr: it answers every worker of topo with the sum of all
// workers' pushes, reports done and waits for the scheduler's finish. It closes ln.
// When ctx ends first it returns a [*MissingError].
func RunServer(ctx context.Context, ln net.Listener, dial DialFunc, schedulerAddr string, index int, topo Topology, stdout io.Writer) error {
	sv := &server{
		node: NodeName(RoleServer, index),
		agg:  newAggregator(topo.WorkerNames()),
	}
	sv.log = nodeLogger(stdout, sv.node)
	sv.log.Printf(LogListening, ln.Addr())
	ctx, cancel := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel(nil)
	// Serve until the finish, not just until every worker got its answer, so a
	// worker whose pod was recreated meanwhile can still get it.
	wg.Go(func() {
		serveConns(ctx, cancel, ln, &wg, func(c *Conn) { sv.handlePush(ctx, c) })
	})
	port, err := portOf(ln)
	if err != nil {
		return fmt.Errorf("%s: %w", sv.node, err)
	}
	sess, _, err := joinAndAwaitStart(ctx, dial, schedulerAddr, sv.node, port, sv.log)
	if err != nil {
		return err
	}
	defer sess.close()
	if err := sv.agg.wait(ctx, sv.node); err != nil {
		return err
	}
	return sess.finish(ctx)
}

type server struct {
	node string
	log  *log.Logger
	agg  *aggregator
}

// handlePush serves one worker connection: one push, answered with the sum once
// every worker pushed.
func (sv *server) handlePush(ctx context.Context, c *Conn) {
	defer closeOnDone(ctx, c)()
	defer c.Close()
	m, err := c.Recv()
	if err != nil {
		if ctx.Err() == nil {
			sv.log.Printf(LogLost, c.RemoteAddr(), err)
		}
		return
	}
	if reason := sv.agg.checkPush(m); reason != "" {
		sv.log.Printf(LogRejected, m.Node, reason)
		// Best effort: the rejection is logged, and the connection is closed on
		// return whether or not the worker hears why.
		_ = c.Send(Message{Type: MsgReject, Reason: reason})
		return
	}
	sv.log.Printf(LogPushFrom, m.Node, c.RemoteAddr(), m.Values)
	if sum, complete := sv.agg.push(m.Node, m.Values); complete {
		sv.log.Printf(LogAggregated, len(sv.agg.pushed.want), sum)
	}
	select {
	case <-sv.agg.ready:
	case <-ctx.Done():
		return
	}
	if err := c.Send(Message{Type: MsgAggregate, Node: sv.node, Values: sv.agg.sum, Workers: len(sv.agg.pushed.want)}); err != nil {
		sv.log.Printf(LogLost, m.Node, err)
		return
	}
	sv.log.Printf(LogSentAggregate, m.Node)
	sv.agg.markAnswered(m.Node)
}

// aggregator sums one value per worker, safe for the concurrent push handlers.
type aggregator struct {
	mu       sync.Mutex
	pushes   map[string][]int64
	pushed   *peerSet
	answered *peerSet
	// sum is written once, before ready is closed, and only read after.
	sum         []int64
	ready       chan struct{}
	allAnswered chan struct{}
}

func newAggregator(workers []string) *aggregator {
	return &aggregator{
		pushes:      map[string][]int64{},
		pushed:      newPeerSet(workers),
		answered:    newPeerSet(workers),
		ready:       make(chan struct{}),
		allAnswered: make(chan struct{}),
	}
}

// checkPush returns why m is not an acceptable push, or "".
func (a *aggregator) checkPush(m Message) string {
	switch {
	case m.Type != MsgPush:
		return fmt.Sprintf("expected a push, got %q", m.Type)
	case !a.pushed.expects(m.Node):
		return fmt.Sprintf("not a worker of this job (%d workers)", len(a.pushed.want))
	case len(m.Values) != pushLen:
		return fmt.Sprintf("pushed %d values, want %d", len(m.Values), pushLen)
	}
	return ""
}

// push records a worker's values and reports whether they completed the sum. A
// worker pushing again (its pod was recreated) replaces its earlier push; after
// the sum is made, pushes only get the same answer.
func (a *aggregator) push(worker string, values []int64) (sum []int64, complete bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sum != nil {
		return nil, false
	}
	a.pushes[worker] = values
	a.pushed.add(worker)
	if !a.pushed.complete() {
		return nil, false
	}
	var all [][]int64
	for _, w := range a.pushed.want {
		all = append(all, a.pushes[w])
	}
	a.sum = Sum(all...)
	close(a.ready)
	return a.sum, true
}

func (a *aggregator) markAnswered(worker string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.answered.add(worker) && a.answered.complete() {
		close(a.allAnswered)
	}
}

// wait returns once every worker got the sum, or a MissingError naming the
// workers that did not push, or did not get their answer.
func (a *aggregator) wait(ctx context.Context, node string) error {
	select {
	case <-a.allAnswered:
		return nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sum == nil {
		return &MissingError{Node: node, Waiting: phasePushes, Missing: a.pushed.missing(), Cause: context.Cause(ctx)}
	}
	return &MissingError{Node: node, Waiting: phaseAnswers, Missing: a.answered.missing(), Cause: context.Cause(ctx)}
}
