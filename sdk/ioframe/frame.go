package ioframe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// copyChunk is the chunk a copy reads at most at once: large enough for few
// writes per object, small enough to keep in a pool per object in flight.
const copyChunk = 128 << 10

// copyBufs holds copy buffers with room for a request's header, a chunk's length and the
// body's end around a chunk, so that a small object is one write.
var copyBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 2*4+2*MaxField+4+copyChunk+4)
	return &b
}}

// ErrFraming is a peer that broke the framing: the stream cannot be trusted past it.
var ErrFraming = errors.New("broken io framing")

// ErrTruncated is a stream that ended inside a frame, as one does when its writer dies; it is
// an ErrFraming.
var ErrTruncated = fmt.Errorf("%w: the stream ends inside a frame", ErrFraming)

// ObjectError is an error the command answered for one object.
type ObjectError struct{ Message string }

func (e *ObjectError) Error() string { return e.Message }

// appendHeader appends a request's header: the object's name and arguments, each bounded by
// MaxField.
func appendHeader(b []byte, object, args string) ([]byte, error) {
	if len(object) > MaxField || len(args) > MaxField {
		return b, fmt.Errorf("object name of %d bytes or arguments of %d: at most %d bytes each", len(object), len(args), MaxField)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(object)))
	b = append(b, object...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(args)))
	return append(b, args...), nil
}

// AppendRequest appends a whole request of a body held in memory, at most MaxChunk bytes: the
// object's name and arguments, the body as one chunk, and the body's end.
func AppendRequest(b []byte, object, args string, body []byte) ([]byte, error) {
	if len(body) > MaxChunk {
		return b, fmt.Errorf("a body of %d bytes does not fit one chunk of at most %d", len(body), MaxChunk)
	}
	b, err := appendHeader(b, object, args)
	if err != nil {
		return b, err
	}
	if len(body) > 0 {
		b = binary.BigEndian.AppendUint32(b, uint32(len(body)))
		b = append(b, body...)
	}
	return binary.BigEndian.AppendUint32(b, 0), nil
}

// WriteRequest writes a whole request: the object's name and arguments, then body as chunks and
// the body's end. An object that fits one chunk is one write.
func WriteRequest(w io.Writer, object, args string, body io.Reader) error {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	b, err := appendHeader((*bp)[:0], object, args)
	if err == nil {
		_, err = copyChunks(w, b, body)
	}
	return err
}

// copyChunks writes prefix, then r's bytes as chunks of up to copyChunk and the body's end,
// filling each chunk before it writes it, so that what r has at once goes in one write. buf,
// which holds prefix, is a pooled buffer's.
func copyChunks(w io.Writer, prefix []byte, r io.Reader) (int64, error) {
	var total int64
	for {
		start := len(prefix)
		b := append(prefix, 0, 0, 0, 0)
		n, eof := 0, false
		for n < copyChunk && !eof {
			m, err := r.Read(b[start+4+n : start+4+copyChunk])
			n += m
			switch {
			case errors.Is(err, io.EOF):
				eof = true
			case err != nil:
				return total, err
			}
		}
		if n == 0 {
			b = b[:start] // no chunk: only the end
		} else {
			binary.BigEndian.PutUint32(b[start:], uint32(n))
			b = b[:start+4+n]
		}
		if eof {
			b = binary.BigEndian.AppendUint32(b, 0)
		}
		if _, err := w.Write(b); err != nil {
			return total, err
		}
		total += int64(n)
		if eof {
			return total, nil
		}
		prefix = b[:0]
	}
}

// ReadRequestHeader reads an object's name and arguments. It returns io.EOF when the stream
// ends cleanly before a request.
func ReadRequestHeader(r io.Reader) (object, args string, err error) {
	o, err := readField(r)
	if err != nil {
		return "", "", err
	}
	a, err := readField(r)
	if err != nil {
		return "", "", noEOF(err)
	}
	return string(o), string(a), nil
}

func readField(r io.Reader) ([]byte, error) {
	n, err := readUint32(r)
	if err != nil {
		return nil, err
	}
	if n > MaxField {
		return nil, fmt.Errorf("%w: a field of %d bytes, at most %d allowed", ErrFraming, n, MaxField)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r, b)
	return b, noEOF(err)
}

func readUint32(r io.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, ErrTruncated
		}
		return 0, err
	}
	return binary.BigEndian.Uint32(b[:]), nil
}

// noEOF turns an end of stream inside a frame into a framing error.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ErrTruncated
	}
	return err
}

// ChunkWriter writes a body as chunks; Close writes its end, Fail an error instead.
type ChunkWriter struct {
	w   io.Writer
	hdr [4]byte
}

// NewChunkWriter writes chunks to w.
func NewChunkWriter(w io.Writer) *ChunkWriter { return &ChunkWriter{w: w} }

// Write writes p as one chunk or more; an empty p writes nothing.
func (c *ChunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), MaxChunk)
		binary.BigEndian.PutUint32(c.hdr[:], uint32(n))
		if _, err := c.w.Write(c.hdr[:]); err != nil {
			return written, err
		}
		if _, err := c.w.Write(p[:n]); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// ReadFrom copies r into chunks of up to copyChunk bytes; the body's end is Close's to write.
func (c *ChunkWriter) ReadFrom(r io.Reader) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	b := (*bp)[:4+copyChunk]
	var total int64
	for {
		n, err := r.Read(b[4 : 4+copyChunk])
		if n > 0 {
			binary.BigEndian.PutUint32(b, uint32(n))
			if _, werr := c.w.Write(b[:4+n]); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Close writes the body's end.
func (c *ChunkWriter) Close() error {
	binary.BigEndian.PutUint32(c.hdr[:], 0)
	_, err := c.w.Write(c.hdr[:])
	return err
}

// Fail ends the body with an error whose message is msg, cut to MaxField bytes.
func (c *ChunkWriter) Fail(msg string) error {
	if len(msg) > MaxField {
		msg = msg[:MaxField]
	}
	b := binary.BigEndian.AppendUint32(nil, errorMark)
	b = binary.BigEndian.AppendUint32(b, uint32(len(msg)))
	_, err := c.w.Write(append(b, msg...))
	return err
}

// ChunkReader reads a body of chunks. At its end Read returns io.EOF, or an *ObjectError the
// writer failed it with; a broken framing is an error wrapping ErrFraming.
type ChunkReader struct {
	r    io.Reader
	left uint32 // bytes left in the current chunk
	err  error  // sticky: the body's end or what broke it
}

// NewChunkReader reads chunks from r.
func NewChunkReader(r io.Reader) *ChunkReader { return &ChunkReader{r: r} }

func (c *ChunkReader) Read(p []byte) (int, error) {
	for c.left == 0 {
		if c.err != nil {
			return 0, c.err
		}
		c.err = c.next()
	}
	if len(p) > int(c.left) {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= uint32(n)
	if err != nil && (c.left > 0 || !errors.Is(err, io.EOF)) {
		c.err = noEOF(err)
		return n, c.err
	}
	return n, nil
}

// next reads the next chunk's length; it returns the body's end, if that is what comes.
func (c *ChunkReader) next() error {
	n, err := readUint32(c.r)
	switch {
	case err != nil:
		return noEOF(err)
	case n == 0:
		return io.EOF
	case n == errorMark:
		msg, err := readField(c.r)
		if err != nil {
			return noEOF(err)
		}
		return &ObjectError{Message: string(msg)}
	case n > MaxChunk:
		return fmt.Errorf("%w: a chunk of %d bytes, at most %d allowed", ErrFraming, n, MaxChunk)
	}
	c.left = n
	return nil
}

// Drain reads the rest of the body and returns how it ended: nil for its end, the
// *ObjectError or the framing error otherwise.
func (c *ChunkReader) Drain() error {
	_, err := io.Copy(io.Discard, c)
	return err
}
