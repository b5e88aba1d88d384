package ws

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

// FuzzReadFrame reads arbitrary bytes as a stream of frame headers, skipping each payload as
// the connection does, and checks that readHeader never panics; that a header it accepts obeys
// RFC 6455 (a known opcode, masked as the role asks, a length below 2^63, control frames final
// and at most 125 bytes) and re-encodes with appendHeader, in no more bytes, to the same fields;
// that anything else is a *ProtocolError or the stream's end; and that reading allocates a
// few bytes at most, whatever length a header declares: a payload is never allocated here.
func FuzzReadFrame(f *testing.F) {
	f.Add(true, []byte{0x81, 0x85, 1, 2, 3, 4, 'h' ^ 1, 'e' ^ 2, 'l' ^ 3, 'l' ^ 4, 'o' ^ 1})
	f.Add(false, []byte{0x02, 126, 0x01, 0x00, 0x89, 0x00, 0x80, 127, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(false, []byte{0x82, 127, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}) // 2^63-1 declared, none sent
	f.Add(false, []byte{0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0})                      // 2^63: refused
	f.Add(true, []byte{0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8, 0x8A, 0xFE})
	f.Add(false, []byte{0x09, 0x00, 0xC2, 0x00, 0x83, 0x00})
	var src bytes.Reader
	br := bufio.NewReaderSize(&src, 16)
	f.Fuzz(func(t *testing.T, wantMasked bool, stream []byte) {
		var headers []header
		var sizes []int // the bytes each header took in the stream
		var last error
		offset := func() int { return len(stream) - src.Len() - br.Buffered() }
		readAll := func() {
			src.Reset(stream)
			br.Reset(&src)
			headers, sizes = headers[:0], sizes[:0]
			for {
				start := offset()
				h, err := readHeader(br, wantMasked)
				if err != nil {
					last = err
					return
				}
				headers, sizes = append(headers, h), append(sizes, offset()-start)
				if _, err := br.Discard(int(h.length)); err != nil {
					last = err
					return
				}
			}
		}
		readAll() // grows the slices, so that measuring counts readHeader alone
		if n := allocatedBytes(readAll); n > 256 {
			t.Fatalf("reading %d bytes of frames allocated %d bytes", len(stream), n)
		}
		if _, protocol := errors.AsType[*ProtocolError](last); !protocol && !errors.Is(last, io.EOF) && !errors.Is(last, io.ErrUnexpectedEOF) {
			t.Fatalf("readHeader failed with %v, neither a protocol error nor the stream's end", last)
		}
		for i, h := range headers {
			checkHeader(t, h, wantMasked, sizes[i])
		}
	})
}

// checkHeader checks an accepted header against RFC 6455 and its re-encoding.
func checkHeader(t *testing.T, h header, wantMasked bool, size int) {
	t.Helper()
	switch h.op {
	case opContinuation, opText, opBinary, opClose, opPing, opPong:
	default:
		t.Fatalf("accepted opcode %#x", byte(h.op))
	}
	if h.masked != wantMasked || h.length < 0 || (h.op.control() && (!h.fin || h.length > maxControlPayload)) {
		t.Fatalf("accepted %+v from a peer that must mask: %v", h, wantMasked)
	}
	b := appendHeader(nil, h)
	if len(b) > size {
		t.Fatalf("%+v, read from %d bytes, encodes in %d", h, size, len(b))
	}
	again, err := readHeader(bufio.NewReader(bytes.NewReader(b)), wantMasked)
	if err != nil || again != h {
		t.Fatalf("%+v encodes as %x, which reads as %+v, %v", h, b, again, err)
	}
}

// allocatedBytes is the least that f allocated on the heap in three runs: other goroutines
// can only add to a run's count.
func allocatedBytes(f func()) uint64 {
	least := ^uint64(0)
	var before, after runtime.MemStats
	for range 3 {
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return least
}
