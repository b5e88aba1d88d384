package transformer_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/ws"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// The SDK's round trips are measured against bare servers doing the same
// echo in the same process, so that results read as ratios:
//
//	go test -run '^$' -bench . ./sdk/transformer
//
// allocs/op counts client and server; it must not grow with the size.

func BenchmarkHPush(b *testing.B) {
	s := transformertest.NewServer(b, echo)
	benchSizes(b, func(payload []byte) error {
		return s.Do(b.Context(), transformertest.HPush, "bench/object", "", payload, io.Discard)
	})
}

func BenchmarkWS(b *testing.B) {
	s := transformertest.NewServer(b, echo)
	benchSizes(b, func(payload []byte) error {
		return s.Do(b.Context(), transformertest.WS, "bench/object", "", payload, io.Discard)
	})
}

// benchToken is the credential the baselines' clients send, so that both
// sides of each comparison send the same bytes; the bare servers do not check
// it, so the SDK's check is part of what the ratio measures.
const benchToken = "k1.bench-token-of-the-length-of-a-real-one-0123456"

// BenchmarkBareHTTP is the hpush baseline: a net/http handler that copies
// the body back.
func BenchmarkBareHTTP(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		io.Copy(w, r.Body)
	}))
	defer ts.Close()
	url := wire.ObjectURL(ts.URL, "bench/object", wire.Query{})
	client := ts.Client()
	client.Transport = transformertest.WithToken(client.Transport, benchToken)
	benchSizes(b, func(payload []byte) error {
		return transformertest.DoHTTP(b.Context(), client, http.MethodPut, url, bytes.NewReader(payload), io.Discard)
	})
}

// BenchmarkBareWS is the ws baseline: a handler on the same WebSocket that
// skips each control message and copies each data message back.
func BenchmarkBareWS(b *testing.B) {
	ts := httptest.NewServer(http.HandlerFunc(bareWSEcho))
	defer ts.Close()
	c, err := transformertest.DialWS(b.Context(), ts.URL, benchToken)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchSizes(b, func(payload []byte) error {
		return c.Do(b.Context(), wire.Control{Object: "bench/object"}, bytes.NewReader(payload), io.Discard)
	})
}

func bareWSEcho(w http.ResponseWriter, r *http.Request) {
	conn, err := ws.Accept(w, r)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	buf := make([]byte, 64<<10)
	for {
		if _, ctrl, err := conn.NextReader(); err != nil || copyDiscard(ctrl) != nil {
			return
		}
		_, in, err := conn.NextReader()
		if err != nil {
			return
		}
		conn.LockWrite()
		_, srcErr, dstErr := conn.WriteFrom(ws.Binary, in, buf)
		conn.UnlockWrite()
		if srcErr != nil || dstErr != nil {
			return
		}
	}
}

func copyDiscard(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	return err
}

func benchSizes(b *testing.B, roundTrip func(payload []byte) error) {
	for _, size := range []int{4 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			payload := transformertest.Object{Size: size}.Bytes()
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if err := roundTrip(payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
