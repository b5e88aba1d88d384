package agent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"testing/iotest"

	"github.com/mlkube/mlkube/internal/bufpool"
)

// TestTransformerConnReadFrom checks that a request body sent through the
// pooled buffer arrives whole, with io.Copy's count and errors.
func TestTransformerConnReadFrom(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		data, _ := io.ReadAll(c)
		got <- data
	}()
	c, err := dialTransformer(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rf, ok := c.(io.ReaderFrom)
	if !ok {
		t.Fatalf("%T is no io.ReaderFrom", c)
	}
	body := bytes.Repeat([]byte("0123456789abcdef"), bufpool.StreamSize/8) // two buffers' worth
	if n, err := rf.ReadFrom(&io.LimitedReader{R: iotest.HalfReader(bytes.NewReader(body)), N: int64(len(body))}); n != int64(len(body)) || err != nil {
		t.Errorf("ReadFrom = %d, %v; want %d, nil", n, err, len(body))
	}
	errBody := errors.New("body failed")
	if n, err := rf.ReadFrom(io.MultiReader(bytes.NewReader([]byte("x")), iotest.ErrReader(errBody))); n != 1 || !errors.Is(err, errBody) {
		t.Errorf("failing body: ReadFrom = %d, %v; want 1, %v", n, err, errBody)
	}
	c.Close()
	if data := <-got; !bytes.Equal(data, append(body, 'x')) {
		t.Errorf("the peer received %d bytes, want %d", len(data), len(body)+1)
	}
}
