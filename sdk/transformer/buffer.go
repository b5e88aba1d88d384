package transformer

import (
	"errors"
	"io"

	"github.com/mlkube/mlkube/internal/bufpool"
)

// bufferSize is the unit objects are copied in: large enough that per-chunk
// overhead (syscalls, ws frame headers) is small, small enough that many
// objects in flight cost little memory.
const bufferSize = 64 << 10

var buffers = bufpool.New(bufferSize)

func getBuffer() *[]byte  { return buffers.Get() }
func putBuffer(b *[]byte) { buffers.Put(b) }

// drained reads r to its end if at most limit bytes remain, and reports
// whether it got there.
func drained(r io.Reader, limit int64) bool {
	_, err := io.CopyN(io.Discard, r, limit+1)
	return errors.Is(err, io.EOF)
}

// closeResult closes a Func's result if it can be closed.
func closeResult(r io.Reader) {
	if c, ok := r.(io.Closer); ok {
		c.Close()
	}
}
