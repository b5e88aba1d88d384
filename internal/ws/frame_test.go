package ws

import (
	"bufio"
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

func TestHeaderRoundTrip(t *testing.T) {
	for _, length := range []int64{0, 1, 125, 126, 0xFFFF, 0x10000, 1 << 40} {
		for _, masked := range []bool{false, true} {
			want := header{fin: length%2 == 0, op: opBinary, masked: masked, length: length}
			if masked {
				want.key = [4]byte{1, 2, 3, 4}
			}
			b := appendHeader(nil, want)
			got, err := readHeader(bufio.NewReader(bytes.NewReader(b)), masked)
			if err != nil {
				t.Fatalf("length %d masked %v: %v", length, masked, err)
			}
			if got != want {
				t.Errorf("length %d masked %v: read %+v, wrote %+v", length, masked, got, want)
			}
		}
	}
}

func TestReadHeaderRefuses(t *testing.T) {
	cases := map[string]struct {
		frame      []byte
		wantMasked bool
	}{
		"reserved bit":                {[]byte{0x80 | 0x40 | 0x2, 0}, false},
		"unknown opcode":              {[]byte{0x80 | 0x3, 0}, false},
		"server frame masked":         {[]byte{0x82, 0x80, 0, 0, 0, 0}, false},
		"client frame not masked":     {[]byte{0x82, 0x00}, true},
		"fragmented ping":             {[]byte{0x09, 0}, false},
		"oversized close":             {[]byte{0x88, 126, 0, 200}, false},
		"length with the top bit set": {append([]byte{0x82, 127}, 0x80, 0, 0, 0, 0, 0, 0, 0), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := readHeader(bufio.NewReader(bytes.NewReader(tc.frame)), tc.wantMasked)
			if _, ok := errors.AsType[*ProtocolError](err); !ok {
				t.Fatalf("readHeader = %v, want a *ProtocolError", err)
			}
		})
	}
}

func TestMaskCopy(t *testing.T) {
	key := [4]byte{0xA1, 0xB2, 0xC3, 0xD4}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		src := make([]byte, rng.IntN(3*maskBlock))
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		pos := rng.IntN(4)
		want := make([]byte, len(src))
		for i := range src {
			want[i] = src[i] ^ key[(pos+i)%4]
		}
		got := make([]byte, len(src))
		if next := maskCopy(got, src, key, pos); next != (pos+len(src))%4 {
			t.Fatalf("maskCopy returned position %d, want %d", next, (pos+len(src))%4)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("maskCopy(len %d, pos %d) = %x, want %x", len(src), pos, got, want)
		}
		// In place, and masking twice restores the bytes.
		maskCopy(got, got, key, pos)
		if !bytes.Equal(got, src) {
			t.Fatalf("masking twice (len %d, pos %d) did not restore the bytes", len(src), pos)
		}
	}
}

func TestCloseReason(t *testing.T) {
	long := bytes.Repeat([]byte("é"), 100) // 200 bytes
	got := closeReason(string(long))
	if len(got) > 123 || !bytes.HasPrefix(long, []byte(got)) || len(got)%2 != 0 {
		t.Errorf("closeReason = %q (%d bytes), want whole characters within 123 bytes", got, len(got))
	}
	if got := closeReason("short"); got != "short" {
		t.Errorf("closeReason(short) = %q", got)
	}
}

// BenchmarkMask masks 64 KiB in place, against a plain copy of the same
// bytes (x-memmove: how many times slower than copying masking is).
func BenchmarkMask(b *testing.B) {
	buf := make([]byte, 64<<10)
	dst := make([]byte, len(buf))
	var copyNs float64
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		for b.Loop() {
			copy(dst, buf)
		}
		copyNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("mask", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		key := [4]byte{1, 2, 3, 4}
		for b.Loop() {
			maskCopy(buf, buf, key, 1)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/copyNs, "x-memmove")
	})
}
