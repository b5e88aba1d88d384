// Command gzip gzip-compresses objects, or decompresses them when the
// arguments are "decompress". Both directions stream.
package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/mlkube/mlkube/sdk/transformer"
)

func main() { transformer.Main(transform) }

func transform(_ context.Context, in io.Reader, _, args string) (io.Reader, error) {
	switch args {
	case "":
		return compress(in), nil
	case "decompress":
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, transformer.StatusError(http.StatusBadRequest, fmt.Errorf("decompress: %w", err))
		}
		return zr, nil
	}
	return nil, transformer.StatusError(http.StatusBadRequest, fmt.Errorf(`unknown args %q: want "" or "decompress"`, args))
}

// writers recycles gzip writers, which allocate about a megabyte of state.
var writers = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// compress returns the gzip stream of in, produced as it is read. When the
// reader is closed early, the writer side fails and the goroutine ends.
func compress(in io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		zw := writers.Get().(*gzip.Writer)
		zw.Reset(pw)
		_, err := io.Copy(zw, in)
		if err == nil {
			err = zw.Close()
		}
		writers.Put(zw)
		pw.CloseWithError(err)
	}()
	return pr
}
