package agent

import (
	"errors"
	"net/http"
	"sync"
	"time"
)

// deadlineWriter bounds each write of an HTTP answer by timeout: a peer
// that stops reading has its connection cut instead of holding the handler
// and whatever it serves. The agent's server has no WriteTimeout, which
// would bound a whole answer and cut long legitimate streams; a deadline
// per write bounds a stall only.
//
// net/http keeps a connection's write deadline from one request to the
// next, so a handler ends its deadlineWriter before returning.
type deadlineWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration

	mu sync.Mutex
	// cut: stop was called. ended: the connection may already serve its
	// next request, which stop must leave alone.
	cut, ended bool
}

func newDeadlineWriter(w http.ResponseWriter, timeout time.Duration) *deadlineWriter {
	return &deadlineWriter{w: w, rc: http.NewResponseController(w), timeout: timeout}
}

var errAnswerCut = errors.New("answer cut")

func (d *deadlineWriter) Write(p []byte) (int, error) {
	if err := d.arm(); err != nil {
		return 0, err
	}
	return d.w.Write(p)
}

// arm gives the next write its deadline, under mu so that it cannot undo a
// stop.
func (d *deadlineWriter) arm() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return errAnswerCut
	}
	// A writer without deadlines (a test's recorder) does not block.
	_ = d.rc.SetWriteDeadline(time.Now().Add(d.timeout))
	return nil
}

// stop cuts the answer, from any goroutine: the write going on fails at
// once, and every later one.
func (d *deadlineWriter) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut || d.ended {
		return
	}
	d.cut = true
	_ = d.rc.SetWriteDeadline(time.Unix(1, 0))
}

func (d *deadlineWriter) stopped() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cut
}

// end sends what the answer still buffers, within a write's deadline, and
// lifts the deadline for the connection's next request; what net/http
// writes after (the few bytes that end a chunked answer) goes without. A
// connection whose answer failed keeps it: net/http closes it.
func (d *deadlineWriter) end() error {
	if err := d.arm(); err != nil {
		return err
	}
	err := d.rc.Flush()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ended = true
	if err == nil && !d.cut {
		_ = d.rc.SetWriteDeadline(time.Time{})
	}
	return err
}
