package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
)

// Payload is the object of size bytes every driver sends: reproducible pseudo-random bytes, so a
// result that is not the object itself (a zeroed or shifted buffer) fails its check.
func Payload(size int) []byte {
	b := make([]byte, size)
	_, _ = rand.NewChaCha8([32]byte{byte(size), byte(size >> 8), byte(size >> 16)}).Read(b) // never fails
	return b
}

// checkBufferSize is the read unit of a Checker, the agent's copy unit.
const checkBufferSize = 64 << 10

// Checker compares results with the object it expects as they stream in, through its own
// buffer, so checking costs every row the same. One Checker serves one client at a time.
type Checker struct {
	want []byte
	off  int
	buf  []byte
}

// NewChecker returns a Checker of results that must equal want.
func NewChecker(want []byte) *Checker {
	return &Checker{want: want, buf: make([]byte, checkBufferSize)}
}

// ErrResultDiffers is the error of a result that is not the object.
var ErrResultDiffers = errors.New("result differs from the object")

// Write takes the next bytes of a result.
func (c *Checker) Write(p []byte) (int, error) {
	if len(p) > len(c.want)-c.off || !bytes.Equal(p, c.want[c.off:c.off+len(p)]) {
		return 0, fmt.Errorf("%w at byte %d", ErrResultDiffers, c.off)
	}
	c.off += len(p)
	return len(p), nil
}

// ReadFrom takes a whole result, so io.Copy reads it into c's buffer.
func (c *Checker) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	for {
		m, err := r.Read(c.buf)
		if m > 0 {
			if _, werr := c.Write(c.buf[:m]); werr != nil {
				return n, werr
			}
			n += int64(m)
		}
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// Check reads one result from r and compares it with the object.
func (c *Checker) Check(r io.Reader) error {
	c.Reset()
	if _, err := c.ReadFrom(r); err != nil {
		return err
	}
	return c.Complete()
}

// Reset starts a new result.
func (c *Checker) Reset() { c.off = 0 }

// Complete says whether the result has ended with the object's last byte.
func (c *Checker) Complete() error {
	if c.off != len(c.want) {
		return fmt.Errorf("%w: %d bytes, want %d", ErrResultDiffers, c.off, len(c.want))
	}
	return nil
}
