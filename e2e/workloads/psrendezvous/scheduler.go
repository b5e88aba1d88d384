package psrendezvous

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"time"
)

// RunScheduler runs the scheduler on ln until every peer of topo registered,
// exchanged its values and reported done, then tells everyone to finish. It closes
// ln. When ctx ends first it returns a [*MissingError] naming the peers it was
// waiting for.
func RunScheduler(ctx context.Context, ln net.Listener, topo Topology, stdout io.Writer) error {
	s := &scheduler{
		topo:       topo,
		log:        nodeLogger(stdout, NodeName(RoleScheduler, 0)),
		conns:      map[string]*Conn{},
		serverAddr: map[string]string{},
		registered: newPeerSet(topo.PeerNames()),
		done:       newPeerSet(topo.PeerNames()),
	}
	s.log.Printf(LogListening, ln.Addr())
	// ctx bounds the rendezvous; a failing listener cancels it with its error as
	// the cause, which then shows in the MissingError.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// conns bounds the connections: they outlive ctx just long enough to tell
	// every peer why the scheduler gives up.
	conns, closeConns := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	// Connection goroutines end once their conns are closed, so close them
	// before waiting.
	defer wg.Wait()
	defer closeConns()
	events := make(chan event)
	wg.Go(func() {
		serveConns(conns, cancel, ln, &wg, func(c *Conn) { readLoop(conns, c, events) })
	})
	for {
		select {
		case <-ctx.Done():
			err := s.missingError(ctx)
			s.abort(err.Missing, context.Cause(ctx))
			return err
		case ev := <-events:
			if s.handle(ev) {
				return nil
			}
		}
	}
}

// event is one message, or the error that ended a connection, fed to the one
// goroutine that owns the scheduler's state.
type event struct {
	conn *Conn
	msg  Message
	err  error
}

// serveConns hands every accepted connection to handle, in its own goroutine
// tracked by wg, until ctx ends; then it closes ln. If accepting fails first, it
// cancels ctx with that error: a node that cannot accept cannot take part.
func serveConns(ctx context.Context, cancel context.CancelCauseFunc, ln net.Listener, wg *sync.WaitGroup, handle func(*Conn)) {
	defer context.AfterFunc(ctx, func() { ln.Close() })()
	defer ln.Close()
	for {
		nc, err := ln.Accept()
		if err != nil {
			cancel(fmt.Errorf("accepting connections on %s: %w", ln.Addr(), err))
			return
		}
		wg.Go(func() { handle(NewConn(nc)) })
	}
}

// readLoop forwards c's messages as events; its last event carries the error that
// ended the connection.
func readLoop(ctx context.Context, c *Conn, events chan<- event) {
	defer closeOnDone(ctx, c)()
	defer c.Close()
	for {
		m, err := c.Recv()
		select {
		case events <- event{conn: c, msg: m, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// scheduler is the state of RunScheduler, owned by its one goroutine.
type scheduler struct {
	topo       Topology
	log        *log.Logger
	conns      map[string]*Conn  // registered peer → its current connection
	serverAddr map[string]string // server → where it accepts pushes
	registered *peerSet
	done       *peerSet
	started    bool // the server list went out; it is never withdrawn
}

// handle applies one event and reports whether the job is finished.
func (s *scheduler) handle(ev event) (finished bool) {
	switch {
	case ev.err != nil:
		s.lost(ev.conn, ev.err)
	case ev.msg.Type == MsgRegister:
		s.register(ev.conn, ev.msg)
	case ev.msg.Type == MsgDone:
		return s.peerDone(ev.conn, ev.msg)
	default:
		s.reject(ev.conn, ev.msg.Node, fmt.Sprintf("unexpected %q message", ev.msg.Type))
	}
	return false
}

func (s *scheduler) register(c *Conn, m Message) {
	switch {
	case !s.registered.expects(m.Node):
		s.reject(c, m.Node, fmt.Sprintf("not a peer of this job (%d servers, %d workers)", s.topo.Servers, s.topo.Workers))
		return
	case strings.HasPrefix(m.Node, string(RoleServer)+"-") && m.Addr == "":
		s.reject(c, m.Node, "a server must register the address where it accepts pushes")
		return
	}
	if old, ok := s.conns[m.Node]; ok && old != c {
		// A restarted pod registers again while its old connection may linger
		// half-open; the newest one is the live process.
		s.log.Printf(LogReregistered, m.Node)
		old.Close()
	}
	s.conns[m.Node] = c
	s.registered.add(m.Node)
	if m.Addr != "" {
		s.serverAddr[m.Node] = m.Addr
		s.log.Printf(LogRegisteredServer, m.Node, c.RemoteAddr(), m.Addr)
	} else {
		s.log.Printf(LogRegistered, m.Node, c.RemoteAddr())
	}
	switch {
	case s.started:
		// A peer restarted after the start still needs the server list.
		s.sendStart(m.Node)
	case s.registered.complete():
		s.started = true
		s.log.Printf(LogAllRegistered, len(s.registered.want), s.topo.Servers, s.topo.Workers)
		for _, n := range s.registered.want {
			s.sendStart(n)
		}
	default:
		s.broadcastProgress(phaseRegistration, s.registered)
	}
}

func (s *scheduler) sendStart(node string) {
	var servers []ServerAddress
	for _, n := range s.topo.ServerNames() {
		servers = append(servers, ServerAddress{Node: n, Addr: s.serverAddr[n]})
	}
	if s.send(node, Message{Type: MsgStart, Servers: servers}) {
		s.log.Printf(LogSentServerList, node)
	}
}

// peerDone records a done report and, once all peers reported, tells them to
// finish.
func (s *scheduler) peerDone(c *Conn, m Message) bool {
	if !s.started || s.conns[m.Node] != c {
		s.reject(c, m.Node, "done before the start, or from a connection that did not register")
		return false
	}
	s.done.add(m.Node)
	s.log.Printf(LogDoneFrom, m.Node)
	if !s.done.complete() {
		s.broadcastProgress(phaseCompletion, s.done)
		return false
	}
	s.log.Printf(LogAllDone, len(s.done.want))
	for _, n := range s.done.want {
		if s.send(n, Message{Type: MsgFinish}) {
			s.log.Printf(LogSentFinish, n)
		}
	}
	return true
}

// lost forgets a connection that ended. The peer stays registered: it took part,
// and it most likely left because its own deadline expired, so forgetting it
// would blame it for the peers that really are missing. If its pod is recreated,
// it registers again and gets the server list then.
func (s *scheduler) lost(c *Conn, err error) {
	for n, cur := range s.conns {
		if cur == c {
			delete(s.conns, n)
			if !s.done.has(n) {
				s.log.Printf(LogLost, n, err)
			}
			return
		}
	}
}

func (s *scheduler) reject(c *Conn, node, reason string) {
	s.log.Printf(LogRejected, node, reason)
	sendTo(c, Message{Type: MsgReject, Reason: reason})
	c.Close()
}

// broadcastProgress tells every connected peer who is still missing in a phase.
func (s *scheduler) broadcastProgress(phase string, set *peerSet) {
	m := Message{Type: MsgProgress, Phase: phase, Missing: set.missing()}
	for n := range s.conns {
		s.send(n, m)
	}
}

// abort tells every connected peer who is missing, so each fails naming the same
// peers instead of blaming the scheduler for the connection it closes next.
func (s *scheduler) abort(missing []string, cause error) {
	m := Message{Type: MsgAbort, Missing: missing, Reason: cause.Error()}
	for n := range s.conns {
		if s.send(n, m) {
			s.log.Printf(LogSentAbort, n)
		}
	}
}

// send reports whether the message went to node's connection.
func (s *scheduler) send(node string, m Message) bool {
	c, ok := s.conns[node]
	return ok && sendTo(c, m)
}

// sendTimeout bounds one write: the scheduler's one goroutine must not hang on a
// peer that stopped reading, or it would miss its own deadline.
const sendTimeout = 5 * time.Second

// sendTo writes m to c and reports whether it went out. On failure it closes c,
// so that c's reader reports the peer as lost.
func sendTo(c *Conn, m Message) bool {
	c.SetWriteDeadline(time.Now().Add(sendTimeout))
	if err := c.Send(m); err != nil {
		c.Close()
		return false
	}
	return true
}

func (s *scheduler) missingError(ctx context.Context) *MissingError {
	e := &MissingError{Node: NodeName(RoleScheduler, 0), Waiting: phaseRegistration, Missing: s.registered.missing(), Cause: context.Cause(ctx)}
	if s.started {
		e.Waiting, e.Missing = phaseCompletion, s.done.missing()
	}
	return e
}
