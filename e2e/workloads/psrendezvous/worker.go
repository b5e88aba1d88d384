package psrendezvous

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
)

// RunWorker takes part in the rendezvous run by the scheduler at schedulerAddr:
// it pushes its values to every server, checks each server's sum, reports done and
// waits for the scheduler's finish. When ctx ends first it returns a
// [*MissingError].
func RunWorker(ctx context.Context, dial DialFunc, schedulerAddr string, index int, topo Topology, stdout io.Writer) error {
	w := &worker{node: NodeName(RoleWorker, index), index: index, topo: topo, dial: dial}
	w.log = nodeLogger(stdout, w.node)
	sess, servers, err := joinAndAwaitStart(ctx, dial, schedulerAddr, w.node, "", w.log)
	if err != nil {
		return err
	}
	defer sess.close()
	if err := w.pushAll(ctx, servers); err != nil {
		return err
	}
	return sess.finish(ctx)
}

type worker struct {
	node  string
	index int
	topo  Topology
	dial  DialFunc
	log   *log.Logger
}

type pushResult struct {
	server string
	err    error
}

// errBadAnswer marks a server that answered wrongly, as opposed to one that did
// not answer: the first is a failed check, the second a missing peer.
var errBadAnswer = errors.New("bad answer")

// pushAll pushes to all servers at once: each server answers only when every
// worker pushed, so pushing one server at a time would work only if every worker
// used the same order. The first server that fails ends the wait: a recreated
// server pod has a new IP, so this worker could not reach it anyway.
func (w *worker) pushAll(ctx context.Context, servers []ServerAddress) error {
	var names []string
	for _, s := range servers {
		names = append(names, s.Node)
	}
	if want := w.topo.ServerNames(); !slices.Equal(names, want) {
		return fmt.Errorf("%s: the scheduler sent servers %v, want %v", w.node, names, want)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	results := make(chan pushResult, len(servers))
	for i, s := range servers {
		go func() {
			err := w.pushTo(ctx, i, s)
			if err != nil {
				err = fmt.Errorf("%s at %s: %w", s.Node, s.Addr, err)
			}
			results <- pushResult{s.Node, err}
		}()
	}
	answered := newPeerSet(names)
	var failed *pushResult
	for range servers {
		r := <-results
		switch {
		case r.err == nil:
			answered.add(r.server)
		case failed == nil && ctx.Err() == nil:
			failed = &r
			cancel(r.err)
		}
	}
	switch {
	case failed != nil && errors.Is(failed.err, errBadAnswer):
		return fmt.Errorf("%s: %w", w.node, failed.err)
	case failed != nil:
		return &MissingError{Node: w.node, Waiting: phaseAggregates, Missing: []string{failed.server}, Cause: failed.err}
	case !answered.complete():
		return &MissingError{Node: w.node, Waiting: phaseAggregates, Missing: answered.missing(), Cause: context.Cause(ctx)}
	}
	return nil
}

// pushTo pushes to one server and checks its answer.
func (w *worker) pushTo(ctx context.Context, server int, s ServerAddress) error {
	nc, err := dialRetry(ctx, w.dial, s.Addr, w.log)
	if err != nil {
		return err
	}
	c := NewConn(nc)
	defer closeOnDone(ctx, c)()
	defer c.Close()
	if err := c.Send(Message{Type: MsgPush, Node: w.node, Values: PushValues(w.index, server)}); err != nil {
		return err
	}
	w.log.Printf(LogPushed, s.Node, s.Addr)
	m, err := c.Recv()
	switch {
	case err != nil:
		return err
	case m.Type == MsgReject:
		return fmt.Errorf("%w: push rejected: %s", errBadAnswer, m.Reason)
	case m.Type != MsgAggregate:
		return fmt.Errorf("%w: expected an aggregate, got %q", errBadAnswer, m.Type)
	}
	if want := ExpectedAggregate(w.topo.Workers, server); !slices.Equal(m.Values, want) {
		return fmt.Errorf("%w: aggregate %v, want %v", errBadAnswer, m.Values, want)
	}
	w.log.Printf(LogAggregateOK, s.Node, m.Values)
	return nil
}
