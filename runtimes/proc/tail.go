package proc

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Tail is an io.Writer that keeps the last Size bytes written to it; a
// child's stderr goes there so that its error message can quote how it ended.
// It is safe for concurrent use.
type Tail struct {
	Size int

	mu  sync.Mutex
	buf []byte
	cut bool // bytes were dropped from the front
}

// Write keeps the end of p. It never fails.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Size; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is the kept text without surrounding white space, starting with
// "…" when the beginning was dropped (and at a character boundary then).
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if !t.cut {
		return strings.TrimSpace(string(b))
	}
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return "…" + strings.TrimSpace(string(b))
}

// Reset forgets what was written.
func (t *Tail) Reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf, t.cut = t.buf[:0], false
}
