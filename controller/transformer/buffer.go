package transformer

import (
	"errors"
	"io"
	"sync"
)

// bufferSize is the unit objects are copied in: large enough that per-chunk
// overhead (syscalls, ws frame headers) is small, small enough that many
// objects in flight cost little memory.
const bufferSize = 32 << 10

// buffers recycles copy buffers; pointers avoid an allocation per Put.
var buffers = sync.Pool{New: func() any {
	b := make([]byte, bufferSize)
	return &b
}}

func getBuffer() *[]byte  { return buffers.Get().(*[]byte) }
func putBuffer(b *[]byte) { buffers.Put(b) }

// prefetch fills buf from r. complete reports that r ended within buf, in
// which case the whole result is buf[:n] and can be sent with its length.
func prefetch(r io.Reader, buf []byte) (n int, complete bool, err error) {
	n, err = io.ReadFull(r, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, true, nil
	}
	return n, false, err
}

// copyStream copies src to dst through buf and tells a failing source (the
// transformation) from a failing destination (the client). It bypasses
// io.CopyBuffer's ReaderFrom/WriterTo shortcuts, which would allocate their
// own buffers.
func copyStream(dst io.Writer, src io.Reader, buf []byte) (srcErr, dstErr error) {
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return nil, werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return err, nil
		}
	}
}

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
