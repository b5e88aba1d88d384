package bufpool

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestPrefetch(t *testing.T) {
	errBoom := errors.New("boom")
	cases := map[string]struct {
		r            io.Reader
		wantN        int
		wantComplete bool
		wantErr      error
	}{
		"empty":              {r: strings.NewReader(""), wantN: 0, wantComplete: true},
		"short":              {r: strings.NewReader("abc"), wantN: 3, wantComplete: true},
		"one byte at a time": {r: iotest.OneByteReader(strings.NewReader("abc")), wantN: 3, wantComplete: true},
		"exactly full":       {r: strings.NewReader("abcd"), wantN: 4},
		"longer":             {r: strings.NewReader("abcdef"), wantN: 4},
		"error":              {r: iotest.ErrReader(errBoom), wantErr: errBoom},
		"error after data":   {r: io.MultiReader(strings.NewReader("ab"), iotest.ErrReader(errBoom)), wantN: 2, wantErr: errBoom},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n, complete, err := Prefetch(tc.r, make([]byte, 4))
			if n != tc.wantN || complete != tc.wantComplete || !errors.Is(err, tc.wantErr) {
				t.Errorf("prefetch = %d, %v, %v; want %d, %v, %v", n, complete, err, tc.wantN, tc.wantComplete, tc.wantErr)
			}
		})
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestCopyStream(t *testing.T) {
	errSrc, errDst := errors.New("src"), errors.New("dst")
	var out bytes.Buffer
	if s, d := Copy(&out, iotest.HalfReader(strings.NewReader("hello world")), make([]byte, 3)); s != nil || d != nil || out.String() != "hello world" {
		t.Errorf("copy = %v, %v, %q", s, d, out.String())
	}
	if s, d := Copy(io.Discard, io.MultiReader(strings.NewReader("x"), iotest.ErrReader(errSrc)), make([]byte, 3)); !errors.Is(s, errSrc) || d != nil {
		t.Errorf("failing source: %v, %v", s, d)
	}
	if s, d := Copy(failingWriter{errDst}, strings.NewReader("x"), make([]byte, 3)); s != nil || !errors.Is(d, errDst) {
		t.Errorf("failing destination: %v, %v", s, d)
	}
}

func TestCopyStreamLarge(t *testing.T) {
	errSrc := errors.New("src")
	data := bytes.Repeat([]byte("0123456789"), StreamSize/5) // two buffers' worth
	var out bytes.Buffer
	if s, d := CopyStream(&out, bytes.NewReader(data)); s != nil || d != nil || !bytes.Equal(out.Bytes(), data) {
		t.Errorf("copy = %v, %v, %d bytes of %d", s, d, out.Len(), len(data))
	}
	if s, d := CopyStream(io.Discard, io.MultiReader(strings.NewReader("x"), iotest.ErrReader(errSrc))); !errors.Is(s, errSrc) || d != nil {
		t.Errorf("failing source: %v, %v", s, d)
	}
}
