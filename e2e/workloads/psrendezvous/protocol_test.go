package psrendezvous

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func pipe(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return NewConn(a), b
}

func TestConnRoundTrip(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	sender, receiver := NewConn(a), NewConn(b)
	msgs := []Message{
		{Type: MsgRegister, Node: "server-1", Addr: "10.244.1.5:9091"},
		{Type: MsgProgress, Phase: phaseRegistration, Missing: []string{"worker-2"}},
		{Type: MsgStart, Servers: []ServerAddress{{Node: "server-0", Addr: "10.244.1.5:9091"}}},
		{Type: MsgPush, Node: "worker-0", Values: PushValues(0, 1)},
		{Type: MsgAggregate, Node: "server-1", Values: ExpectedAggregate(3, 1), Workers: 3},
		{Type: MsgReject, Reason: "not a peer"},
		{Type: MsgDone, Node: "worker-0"},
		{Type: MsgFinish},
	}
	go func() {
		for _, m := range msgs {
			if err := sender.Send(m); err != nil {
				t.Errorf("Send(%+v): %v", m, err)
				return
			}
		}
		sender.Close()
	}()
	var got []Message
	for {
		m, err := receiver.Recv()
		if errors.Is(err, errConnClosed) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if diff := cmp.Diff(msgs, got); diff != "" {
		t.Errorf("received (-sent +got):\n%s", diff)
	}
}

func TestConnRecvRejectsBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		input   string
		wantErr string
	}{
		"not JSON":      {"GET / HTTP/1.1\n", "bad message"},
		"no type":       {`{"node":"worker-0"}` + "\n", "no type"},
		"line too long": {strings.Repeat("x", maxMessageBytes+1), "too long"},
	} {
		t.Run(name, func(t *testing.T) {
			c, peer := pipe(t)
			go func() { peer.Write([]byte(tc.input)); peer.Close() }()
			_, err := c.Recv()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("got error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestPushValuesSumToExpectedAggregate(t *testing.T) {
	for workers := 1; workers <= 5; workers++ {
		for server := range 3 {
			var pushes [][]int64
			for w := range workers {
				pushes = append(pushes, PushValues(w, server))
			}
			if diff := cmp.Diff(ExpectedAggregate(workers, server), Sum(pushes...)); diff != "" {
				t.Errorf("%d workers, server %d (-closed form +sum):\n%s", workers, server, diff)
			}
		}
	}
}
