package transformer

import (
	"io"
	"sync"
)

// wsBody is an object's data message as its Func sees it. It reports the end
// of the message to the session's reader, which may then read the next
// message, and from then on answers io.EOF itself: the library's reader is
// reused for the next message, which a Func goroutine that reads late must
// not consume.
type wsBody struct {
	mu   sync.Mutex
	r    io.Reader
	eof  bool
	done chan struct{}
}

func newWSBody(r io.Reader) *wsBody {
	return &wsBody{r: r, done: make(chan struct{})}
}

func (b *wsBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof = true
		close(b.done)
	}
	return n, err
}

// Close does nothing: the session drains the message after the Func is done.
func (b *wsBody) Close() error { return nil }
