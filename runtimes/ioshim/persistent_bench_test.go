package ioshim

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// BenchmarkPersistent: 4 KiB objects through Persistent.Transform alone (no HTTP), to the test
// binary serving ioframe's echo.
func BenchmarkPersistent(b *testing.B) {
	b.Setenv(helperEnv, "1")
	p, err := NewPersistent([]string{os.Args[0]}, 2, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	in := bytes.Repeat([]byte("x"), 4<<10)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := p.Transform(b.Context(), bytes.NewReader(in), "o", "")
			if err != nil {
				b.Fatal(err)
			}
			out, err := io.ReadAll(r)
			r.(io.Closer).Close()
			if err != nil || len(out) != len(in) {
				b.Fatalf("%d bytes, %v", len(out), err)
			}
		}
	})
}
