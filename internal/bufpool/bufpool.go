// Package bufpool holds what the data path's two ends (the node agent and the transformer SDK)
// share for moving objects: a pool of fixed-size copy buffers, a prefetch that tells whether an
// object fits one buffer, and a copy that keeps the source's and the destination's failures apart.
package bufpool

import (
	"errors"
	"io"
	"sync"
)

// Pool recycles buffers of one size; pointers avoid an allocation per Put.
type Pool struct{ pool sync.Pool }

// New returns a pool of size-byte buffers.
func New(size int) *Pool {
	p := &Pool{}
	p.pool.New = func() any {
		b := make([]byte, size)
		return &b
	}
	return p
}

// Get returns a buffer; Put it back when done.
func (p *Pool) Get() *[]byte { return p.pool.Get().(*[]byte) }

// Put returns a buffer to the pool.
func (p *Pool) Put(b *[]byte) { p.pool.Put(b) }

// Prefetch fills buf from r. complete reports that r ended within buf, in
// which case the whole result is buf[:n] and can be sent with its length.
func Prefetch(r io.Reader, buf []byte) (n int, complete bool, err error) {
	n, err = io.ReadFull(r, buf)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return n, true, nil
	}
	return n, false, err
}

// Copy copies src to dst through buf and tells a failing source (the
// transformation) from a failing destination (the client). It bypasses
// io.CopyBuffer's ReaderFrom/WriterTo shortcuts, which would allocate their
// own buffers.
func Copy(dst io.Writer, src io.Reader, buf []byte) (srcErr, dstErr error) {
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

// StreamSize is the unit CopyStream copies in. A result streamed to an HTTP
// client goes out in chunks, one a Read, and net/http's server writes each
// chunk in two system calls: its 4 KiB buffer, filled up after the chunk's
// header, then the rest. Chunks four times the size of a prefetch buffer
// save most of those calls (a 1 MiB object on loopback: 132 writes from
// client, agent and transformer together with 64 KiB, 86 with 256 KiB).
const StreamSize = 256 << 10

// Streams holds the buffers of StreamSize.
var Streams = New(StreamSize)

// CopyStream is Copy through a buffer of Streams, for a result that did not
// fit its prefetch buffer.
func CopyStream(dst io.Writer, src io.Reader) (srcErr, dstErr error) {
	buf := Streams.Get()
	defer Streams.Put(buf)
	return Copy(dst, src, *buf)
}

// ObjectSize is the unit the node agent copies objects in. 64 KiB halves the
// system calls of a large stream against the SDK's 32 KiB and still costs
// little per object in flight.
const ObjectSize = 64 << 10

// Objects holds the buffers of ObjectSize.
var Objects = New(ObjectSize)
