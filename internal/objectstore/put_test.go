package objectstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
)

// A result past PartSize goes up as a multipart upload whose parts are sent one after the other
// from one buffer, each signed with its own SHA-256, and reads back whole.
func TestLargeResultGoesUpInPartsSignedWithTheirHash(t *testing.T) {
	s, rec := proxiedStore(t)
	ctx := context.Background()
	data := random(t, 2*PartSize+5)
	rec.taken()
	if err := s.Put(ctx, "large", io.MultiReader(bytes.NewReader(data)), -1); err != nil {
		t.Fatal(err)
	}
	got := rec.taken()
	parts := [][]byte{data[:PartSize], data[PartSize : 2*PartSize], data[2*PartSize:]}
	if len(got) != 2+len(parts) || got[0].method != http.MethodPost || got[len(got)-1].method != http.MethodPost {
		t.Fatalf("the upload went as %+v; want a POST, %d PUTs of parts, a POST", got, len(parts))
	}
	for i, part := range parts {
		if r := got[1+i]; r.method != http.MethodPut || r.sha256 != sha256Hex(part) || r.encoding != "" {
			t.Errorf("part %d went as %+v; want a PUT signed with its SHA-256 %s", i+1, r, sha256Hex(part))
		}
	}
	readBack(t, s, "large", data)
}

// A reader that fails in the middle of a large result fails the Put with its own error, and the
// store is left with neither the object nor the upload's parts.
func TestLargeResultWhoseReaderFailsLeavesNothing(t *testing.T) {
	s, _ := proxiedStore(t)
	ctx := context.Background()
	broken := errors.New("the transformer went away")
	r := io.MultiReader(bytes.NewReader(random(t, PartSize+HeadSize)), failingReader{broken})
	if err := s.Put(ctx, "broken", r, -1); !errors.Is(err, broken) {
		t.Fatalf("Put of a result whose reader fails: %v; want the reader's error", err)
	}
	if ok, err := s.Exists(ctx, "broken"); err != nil || ok {
		t.Errorf("after the failed Put, the object exists: %v (%v)", ok, err)
	}
	uploads, err := minio.Core{Client: s.c}.ListMultipartUploads(ctx, s.bucket, "", "", "", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(uploads.Uploads) != 0 {
		t.Errorf("after the failed Put, the store keeps uploads %+v; want them aborted", uploads.Uploads)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

// While the store's large Puts are all taken, another large result waits for one, and fails with
// the bound's own error when its context ends first; a small result does not wait at all.
func TestLargePutsWaitForASlot(t *testing.T) {
	s, _ := proxiedStore(t)
	slot := oneSlot(make(chan struct{}, 1))
	s.large = slot
	ctx := context.Background()

	// The first large result holds the only slot until its reader is let go on.
	release := make(chan struct{})
	first := random(t, HeadSize+10)
	done := make(chan error, 1)
	go func() {
		done <- s.Put(ctx, "first", io.MultiReader(bytes.NewReader(first), waitingReader{release}), -1)
	}()
	for deadline := time.Now().Add(time.Minute); len(slot) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first large Put never took its slot")
		}
	}

	small := random(t, 100)
	if err := s.Put(ctx, "small", bytes.NewReader(small), -1); err != nil {
		t.Fatalf("a small result while the large Puts are taken: %v", err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	err := s.Put(ended, "second", bytes.NewReader(random(t, HeadSize+1)), -1)
	if !errors.Is(err, errNoSlot) || !errors.Is(err, context.Canceled) {
		t.Errorf("a large result while the only slot is taken, its context ended: %v; want the bound's error with the cause", err)
	}

	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	readBack(t, s, "first", first)
	second := random(t, HeadSize+1)
	if err := s.Put(ctx, "second", bytes.NewReader(second), -1); err != nil {
		t.Fatalf("a large result once the slot is free: %v", err)
	}
	readBack(t, s, "second", second)
	readBack(t, s, "small", small)
}

// oneSlot is a bound of one large Put at once (the agent's is package fairshare's Queue).
type oneSlot chan struct{}

var errNoSlot = errors.New("no slot")

func (s oneSlot) Acquire(ctx context.Context) (func(), error) {
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", errNoSlot, context.Cause(ctx))
	}
}

// waitingReader ends once release is closed.
type waitingReader struct{ release chan struct{} }

func (w waitingReader) Read([]byte) (int, error) {
	<-w.release
	return 0, io.EOF
}
