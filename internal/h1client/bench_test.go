package h1client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
)

// BenchmarkRoundTrip PUTs 4 KiB objects to a net/http echo on loopback,
// from c clients at once, through this transport and, as the baseline in
// the same run, through a net/http Transport configured alike. Every answer
// is checked whole. x-net-http is the rate against the baseline.
func BenchmarkRoundTrip(b *testing.B) {
	e := newEcho(b, nil)
	payload := bytes.Repeat([]byte("0123456789abcdef"), 256)
	for _, c := range []int{1, 16} {
		var base float64
		for _, name := range []string{"net-http", "h1client"} {
			b.Run(fmt.Sprintf("%s-c%d", name, c), func(b *testing.B) {
				rt := http.RoundTripper(&http.Transport{MaxIdleConnsPerHost: c})
				if name == "h1client" {
					rt = &Transport{Fallback: rt, Dial: (&net.Dialer{}).DialContext, MaxBody: 32 << 10, MaxIdlePerHost: c}
				}
				client := &http.Client{Transport: rt}
				b.Cleanup(client.CloseIdleConnections)
				ns := drive(b, client, e.srv.URL+"/o", payload, c)
				if name == "net-http" {
					base = ns
				} else if base > 0 {
					b.ReportMetric(base/ns, "x-net-http")
				}
			})
		}
	}
}

// drive sends b.N PUTs of payload from c goroutines and returns ns/op.
func drive(b *testing.B, client *http.Client, url string, payload []byte, c int) float64 {
	b.SetBytes(int64(len(payload)))
	var next sync.Mutex
	left := b.N
	take := func() bool {
		next.Lock()
		defer next.Unlock()
		left--
		return left >= 0
	}
	var wg sync.WaitGroup
	errs := make(chan error, c)
	b.ResetTimer()
	for range c {
		wg.Go(func() {
			buf := make([]byte, len(payload)+1)
			for take() {
				req, _ := http.NewRequest(http.MethodPut, url, bytes.NewReader(payload))
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				n, err := io.ReadFull(resp.Body, buf)
				resp.Body.Close()
				if !errors.Is(err, io.ErrUnexpectedEOF) || !bytes.Equal(buf[:n], payload) {
					errs <- fmt.Errorf("answer of %d bytes (%w), want the %d sent", n, err, len(payload))
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}
