package replicas

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
)

// service stands in for the webhook Service at the address the webhook configurations name: it
// passes each connection, TLS untouched, to a replica whose readiness probe passes, as kube-proxy
// does with the Service's ready endpoints. With none ready the connection is closed and the API
// server's call fails, as on a cluster.
type service struct {
	ln       net.Listener
	replicas []*replica
	next     atomic.Uint32
}

func serve(t *testing.T, addr string, replicas ...*replica) *service {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &service{ln: ln, replicas: replicas}
	t.Cleanup(func() { ln.Close() })
	go s.accept()
	return s
}

func (s *service) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed by the test's cleanup
		}
		go s.pass(c)
	}
}

func (s *service) pass(c net.Conn) {
	defer c.Close()
	r := s.pick()
	if r == nil {
		return
	}
	b, err := net.Dial("tcp", r.webhookAddr)
	if err != nil {
		return
	}
	defer b.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
	<-done
}

// pick takes the replicas in turn, skipping those not ready.
func (s *service) pick() *replica {
	start := int(s.next.Add(1))
	for i := range s.replicas {
		if r := s.replicas[(start+i)%len(s.replicas)]; r.ready() {
			return r
		}
	}
	return nil
}
