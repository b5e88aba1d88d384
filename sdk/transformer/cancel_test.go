package transformer_test

import (
	"context"
	"io"
	"testing"

	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// blocking reads its whole input, says so, and then waits for its context.
type blocking struct {
	started  chan struct{}
	canceled chan struct{}
}

func newBlocking() *blocking {
	return &blocking{started: make(chan struct{}, 1), canceled: make(chan struct{}, 1)}
}

func (b *blocking) fn(ctx context.Context, in io.Reader, _, _ string) (io.Reader, error) {
	if _, err := io.Copy(io.Discard, in); err != nil {
		return nil, err
	}
	b.started <- struct{}{}
	<-ctx.Done()
	b.canceled <- struct{}{}
	return nil, ctx.Err()
}

func TestClientGoneCancelsFunc(t *testing.T) {
	for _, m := range transformertest.Mechanisms {
		t.Run(string(m), func(t *testing.T) {
			b := newBlocking()
			s := transformertest.NewServer(t, b.fn)
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- s.Do(ctx, m, "o", "", randomBytes(1<<20), io.Discard) }()
			<-b.started
			cancel()
			// Blocks until the Func has seen its context end; a missed
			// cancellation fails the test by its timeout.
			<-b.canceled
			if err := <-done; err == nil {
				t.Error("a canceled request succeeded")
			}
		})
	}
}
