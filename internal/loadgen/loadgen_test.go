package loadgen

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mlkube/mlkube/internal/ws"
)

func TestCheckerRefusesWhatIsNotTheObject(t *testing.T) {
	want := Payload(100 << 10)
	if err := NewChecker(want).Check(bytes.NewReader(want)); err != nil {
		t.Errorf("the object itself: %v", err)
	}
	changed := bytes.Clone(want)
	changed[70<<10] ^= 1
	for name, got := range map[string][]byte{
		"short":   want[:len(want)-1],
		"longer":  append(bytes.Clone(want), 0),
		"changed": changed,
		"zeroed":  make([]byte, len(want)),
		"empty":   nil,
	} {
		if err := NewChecker(want).Check(bytes.NewReader(got)); !errors.Is(err, ErrResultDiffers) {
			t.Errorf("%s result: %v, want ErrResultDiffers", name, err)
		}
	}
	if bytes.Equal(Payload(4096), Payload(4097)[:4096]) {
		t.Error("payloads of different sizes share their bytes; a shifted result could pass")
	}
}

// TestHTTPThroughTheRelay drives objects through the relay and the echo and counts them; a
// server that answers something else stops every client with the checker's error.
func TestHTTPThroughTheRelay(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(Echo))
	defer echo.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { Relay(ln, strings.TrimPrefix(echo.URL, "http://")); close(done) }()
	defer func() { ln.Close(); <-done }()

	payload := Payload(1 << 20)
	var left atomic.Int64
	left.Store(40)
	n, err := Objects(4, func() bool { return left.Add(-1) >= 0 }, func() func() error {
		c := &HTTPClient{C: &http.Client{Transport: NewTransport()}, Method: http.MethodPut, URL: "http://" + ln.Addr().String() + "/o", Payload: payload}
		return c.Do
	})
	if err != nil || n != 40 {
		t.Fatalf("40 objects through the relay: %d done, %v", n, err)
	}

	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("not it")) }))
	defer bad.Close()
	n, err = Objects(4, func() bool { return true }, func() func() error {
		c := &HTTPClient{C: &http.Client{Transport: NewTransport()}, Method: http.MethodPut, URL: bad.URL, Payload: payload}
		return c.Do
	})
	if !errors.Is(err, ErrResultDiffers) || n != 0 {
		t.Errorf("a wrong answer: %d done, %v; want 0 and ErrResultDiffers", n, err)
	}
}

func TestStreamKeepsItsWindowAndChecksEveryResult(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(WSEcho))
	defer srv.Close()
	c, err := ws.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"))
	if err != nil {
		t.Fatal(err)
	}
	var left atomic.Int64
	left.Store(500)
	n, err := Stream(OwnWS{c}, Payload(4<<10), 16, func() bool { return left.Add(-1) >= 0 })
	if err != nil || n != 500 {
		t.Fatalf("500 objects at a window of 16: %d received, %v", n, err)
	}
}
