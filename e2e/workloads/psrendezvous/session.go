package psrendezvous

import (
	"context"
	"fmt"
	"log"
	"net"
	"strings"
	"sync"
)

// session is a server's or worker's connection to the scheduler.
type session struct {
	node     string
	log      *log.Logger
	conn     *Conn
	incoming chan received
	wg       sync.WaitGroup
	cancel   context.CancelFunc
	// missing is the scheduler's latest progress report, so a timeout here names
	// the same peers as the scheduler's own.
	missing []string
}

type received struct {
	msg Message
	err error
}

// join dials the scheduler (retrying until ctx ends) and registers node. A server
// passes the port it serves pushes on; it advertises that port on the local IP of
// its connection to the scheduler, which is its pod IP: the one address that every
// other pod can reach, with no extra variable in the contract.
func join(ctx context.Context, dial DialFunc, schedulerAddr, node, pushPort string, logger *log.Logger) (*session, error) {
	nc, err := dialRetry(ctx, dial, schedulerAddr, logger)
	if err != nil {
		return nil, &MissingError{Node: node, Waiting: "connecting to scheduler at " + schedulerAddr, Missing: []string{NodeName(RoleScheduler, 0)}, Cause: err}
	}
	// The session's own context lets close stop the reader even while the
	// caller's context is still live.
	ctx, cancel := context.WithCancel(ctx)
	s := &session{node: node, log: logger, conn: NewConn(nc), incoming: make(chan received), cancel: cancel}
	closeOnDone(ctx, nc)
	reg := Message{Type: MsgRegister, Node: node}
	if pushPort != "" {
		ip, _, err := net.SplitHostPort(nc.LocalAddr().String())
		if err != nil {
			s.close()
			return nil, fmt.Errorf("%s: local address of the connection to the scheduler: %w", node, err)
		}
		reg.Addr = net.JoinHostPort(ip, pushPort)
	}
	if err := s.conn.Send(reg); err != nil {
		s.close()
		return nil, s.lostError("registering", err)
	}
	if reg.Addr != "" {
		logger.Printf(LogJoinedServer, schedulerAddr, reg.Addr)
	} else {
		logger.Printf(LogJoined, schedulerAddr)
	}
	s.wg.Go(func() { s.readLoop(ctx) })
	return s, nil
}

// joinAndAwaitStart joins the scheduler and waits for the server list it sends
// once every peer has registered: the first step of servers and workers alike.
func joinAndAwaitStart(ctx context.Context, dial DialFunc, schedulerAddr, node, pushPort string, logger *log.Logger) (*session, []ServerAddress, error) {
	s, err := join(ctx, dial, schedulerAddr, node, pushPort, logger)
	if err != nil {
		return nil, nil, err
	}
	m, err := s.await(ctx, MsgStart, phaseRegistration)
	if err != nil {
		s.close()
		return nil, nil, err
	}
	logger.Printf(LogServerList, formatServers(m.Servers))
	return s, m.Servers, nil
}

// formatServers renders a server list for the log: "server-0 at 10.0.0.5:9091, …".
func formatServers(servers []ServerAddress) string {
	parts := make([]string, len(servers))
	for i, s := range servers {
		parts[i] = s.Node + " at " + s.Addr
	}
	return strings.Join(parts, ", ")
}

func (s *session) readLoop(ctx context.Context) {
	for {
		m, err := s.conn.Recv()
		select {
		case s.incoming <- received{m, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// await returns the next message of type want, absorbing progress reports. waiting
// describes the wait for the error when ctx ends first.
func (s *session) await(ctx context.Context, want MsgType, waiting string) (Message, error) {
	for {
		select {
		case <-ctx.Done():
			return Message{}, s.timeoutError(ctx, waiting)
		case r := <-s.incoming:
			switch {
			case r.err != nil && ctx.Err() != nil:
				// The connection broke because ctx ended and closed it.
				return Message{}, s.timeoutError(ctx, waiting)
			case r.err != nil:
				return Message{}, s.lostError(waiting, r.err)
			case r.msg.Type == MsgProgress:
				s.missing = r.msg.Missing
				s.log.Printf(LogProgress, r.msg.Phase, strings.Join(r.msg.Missing, ", "))
			case r.msg.Type == MsgAbort:
				return Message{}, &MissingError{Node: s.node, Waiting: waiting, Missing: r.msg.Missing, Cause: fmt.Errorf("the scheduler gave up: %s", r.msg.Reason)}
			case r.msg.Type == MsgReject:
				return Message{}, fmt.Errorf("%s: rejected by the scheduler: %s", s.node, r.msg.Reason)
			case r.msg.Type != want:
				return Message{}, fmt.Errorf("%s: unexpected %q message from the scheduler while %s", s.node, r.msg.Type, waiting)
			default:
				return r.msg, nil
			}
		}
	}
}

func (s *session) timeoutError(ctx context.Context, waiting string) error {
	return &MissingError{Node: s.node, Waiting: waiting, Missing: s.missing, Cause: context.Cause(ctx)}
}

// lostError blames the scheduler: nothing can complete without it.
func (s *session) lostError(waiting string, err error) error {
	return &MissingError{Node: s.node, Waiting: waiting, Missing: []string{NodeName(RoleScheduler, 0)}, Cause: fmt.Errorf("connection to the scheduler lost: %w", err)}
}

// finish reports done and waits for the scheduler's finish.
func (s *session) finish(ctx context.Context) error {
	if err := s.conn.Send(Message{Type: MsgDone, Node: s.node}); err != nil {
		return s.lostError("reporting done", err)
	}
	s.log.Print(LogReportedDone)
	if _, err := s.await(ctx, MsgFinish, phaseCompletion); err != nil {
		return err
	}
	s.log.Print(LogFinishFrom)
	return nil
}

// close ends the session and waits for its reader.
func (s *session) close() {
	s.cancel()
	s.conn.Close()
	s.wg.Wait()
}

// portOf returns the port a listener is bound to, e.g. "9091" for [::]:9091.
func portOf(ln net.Listener) (string, error) {
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err
}
