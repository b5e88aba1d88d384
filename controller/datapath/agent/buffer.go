package agent

import (
	"errors"
	"io"
	"sync"
)

// bufferSize is the unit objects are copied in. 64 KiB halves the system
// calls of a large stream against the SDK's 32 KiB and still costs little per
// object in flight.
const bufferSize = 64 << 10

// buffers recycles copy buffers; pointers avoid an allocation per Put.
var buffers = sync.Pool{New: func() any {
	b := make([]byte, bufferSize)
	return &b
}}

func getBuffer() *[]byte  { return buffers.Get().(*[]byte) }
func putBuffer(b *[]byte) { buffers.Put(b) }

// prefetch fills buf from r. complete reports that r ended within buf.
func prefetch(r io.Reader, buf []byte) (n int, complete bool, err error) {
	n, err = io.ReadFull(r, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, true, nil
	}
	return n, false, err
}

// copyStream copies src to dst through buf and tells a failing source (the
// transformation) from a failing destination (the client). It bypasses
// io.CopyBuffer's ReaderFrom/WriterTo shortcuts, which allocate their own
// buffers.
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
