package ws

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzReadAnswer reads arbitrary bytes as a server's answer to the handshake
// and checks that readAnswer never panics; that it refuses with
// ErrHandshakeTooLarge exactly the answers whose status line and headers
// pass maxHandshakeBytes or maxHandshakeLines before their blank line; that
// it reads no more than the bound from the connection (and a buffer's worth
// of a refusal's body) and allocates a small multiple (6x) of the bound, whatever the answer's size; and
// that an answer it accepts leaves the bytes behind its head unread, for the
// connection's first frames.
func FuzzReadAnswer(f *testing.F) {
	const key = "dGhlIHNhbXBsZSBub25jZQ==" // RFC 6455's example
	valid := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
	f.Add([]byte(valid))
	f.Add([]byte(valid + "\x81\x05early"))
	f.Add([]byte(strings.ReplaceAll(valid, "\r\n", "\n")))
	f.Add([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 12\r\n\r\nno such path"))
	f.Add([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"))
	f.Add(boundedAnswer(key))
	f.Add(append(boundedAnswer(key)[:maxHandshakeBytes-2], "p\r\n\r\n"...))                  // one byte over
	f.Add([]byte(strings.Replace(valid, "\r\n", "\r\n"+strings.Repeat("A: b\r\n", 100), 1))) // many lines
	f.Add([]byte("HTTP/1.1 101 Switching Protocols\r\nX-Pad: " + strings.Repeat("a", 20<<10)))
	f.Add([]byte("\r\n"))
	f.Add([]byte{})
	var src bytes.Reader
	br := newAnswerReader(&src)
	f.Fuzz(func(t *testing.T, answer []byte) {
		var err error
		read := func() {
			src.Reset(answer)
			br.Reset(&src)
			err = readAnswer(br, key)
		}
		// One header line just under the bound costs the most: the line's buffer grows by
		// doubling (about 2x), then it is copied as the value and canonicalised (testdata's
		// a17f20161a8807a0, 15 KiB of X-Pad: 4.3x). What matters is that the cost is a fixed
		// multiple of the bound, not of the answer.
		if n := allocatedBytes(read); n > 6*maxHandshakeBytes {
			t.Fatalf("reading an answer of %d bytes allocated %d bytes", len(answer), n)
		}
		consumed := len(answer) - src.Len()
		bound := maxHandshakeBytes
		if _, refused := errors.AsType[*HandshakeError](err); refused {
			bound += 1024 + br.Size() // the start of the body, read through the buffer
		}
		if consumed > bound {
			t.Fatalf("read %d bytes of the answer, past %d", consumed, bound)
		}
		headSize, tooLarge := expectedHead(answer)
		if errors.Is(err, ErrHandshakeTooLarge) != tooLarge {
			t.Fatalf("readAnswer = %v; the head passes the bounds: %v", err, tooLarge)
		}
		if err == nil {
			if rest := answer[consumed-br.Buffered():]; !bytes.Equal(rest, answer[headSize:]) {
				t.Fatalf("an accepted answer left %q unread, want %q behind its head", rest, answer[headSize:])
			}
		}
	})
}

// expectedHead is the size of answer's status line and headers, with the
// blank line that ends them, and whether they pass the bounds before it
// (headSize is then meaningless).
func expectedHead(answer []byte) (headSize int, tooLarge bool) {
	for i, line := range bytes.SplitAfter(answer, []byte("\n")) {
		headSize += len(line)
		switch {
		case i == maxHandshakeLines || headSize > maxHandshakeBytes:
			return 0, true
		case string(line) == "\r\n" || string(line) == "\n":
			return headSize, false
		}
	}
	return headSize, false
}
