package objectstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mlkube/mlkube/internal/bufpool"
)

// HeadSize is how much of a result of unknown size Put reads before it knows whether the result
// is small: most results of a transform (a digest, a label, a resized image) end within it and go
// up in one PUT from a pooled buffer.
const HeadSize = 1 << 20

// MaxParts is the most parts S3 takes in one multipart upload: a result of unknown size may be at
// most MaxParts × PartSize (160 GiB).
const MaxParts = 10000

var heads = bufpool.New(HeadSize)

// LargePuts bounds how many Puts of unknown size past HeadSize go on at once across the stores
// that share it. Each holds a buffer of PartSize; without a bound an agent whose 64 run workers
// all put results of 16 MiB into a store would hold a gigabyte, past its memory limit, and every
// namespace's data path on the node would go with it. Acquire waits for a slot for as long as ctx
// lets it (the agent's shares them fairly among namespaces), and its error says what bounds them.
type LargePuts interface {
	Acquire(ctx context.Context) (release func(), err error)
}

// acquire takes a slot of s.large, or none when nothing bounds the store's large Puts.
func (s *Store) acquire(ctx context.Context) (release func(), err error) {
	if s.large == nil {
		return func() {}, nil
	}
	return s.large.Acquire(ctx)
}

// putUnknown writes r, of unknown size, as object key. A result that ends within HeadSize goes up
// from a pooled buffer; a larger one waits for a slot of s.large and is read into one buffer of
// PartSize: if it ends there it goes up in one PUT, else as a multipart upload of parts sent from
// that same buffer, never more than one part held. minio-go's own upload of an unknown size would
// hold a second buffer of PartSize, and sign every 64 KiB chunk.
func (s *Store) putUnknown(ctx context.Context, key string, r io.Reader) error {
	head := heads.Get()
	n, complete, err := bufpool.Prefetch(r, *head)
	if err != nil || complete {
		defer heads.Put(head)
		if err != nil {
			return err // the reader's own failure, not the store's
		}
		return s.putWhole(ctx, key, (*head)[:n])
	}
	release, err := s.acquire(ctx)
	if err != nil {
		heads.Put(head)
		return err
	}
	defer release()
	buf := make([]byte, PartSize)
	copy(buf, (*head)[:n])
	heads.Put(head) // for the next small result, while this one goes up
	m, complete, err := bufpool.Prefetch(r, buf[n:])
	if err != nil {
		return err
	}
	if complete {
		return s.putWhole(ctx, key, buf[:n+m])
	}
	return s.putParts(ctx, key, buf, r)
}

// putParts uploads buf, full, then the rest of r in parts of len(buf), each read into buf once
// the one before it is sent. A failure aborts the upload: the store drops its parts, and no
// object appears.
func (s *Store) putParts(ctx context.Context, key string, buf []byte, r io.Reader) (err error) {
	core := minio.Core{Client: s.c}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	id, err := core.NewMultipartUpload(ctx, s.bucket, key, opts)
	if err != nil {
		return s.explain(err, key)
	}
	defer func() {
		if err != nil {
			// Even when ctx ended: the parts sent would otherwise be kept, and billed, until the
			// bucket's lifecycle removes them.
			abort, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
			defer cancel()
			_ = core.AbortMultipartUpload(abort, s.bucket, key, id) // the upload's own error is the one to report
		}
	}()
	var parts []minio.CompletePart
	part := buf
	for number := 1; len(part) > 0; number++ {
		if number > MaxParts {
			return fmt.Errorf("object %q: the result passed %d parts of %d MiB, the most one upload takes", key, MaxParts, PartSize>>20)
		}
		var popts minio.PutObjectPartOptions
		popts.Sha256Hex, popts.DisableContentSha256 = s.payloadHash(part)
		p, err := core.PutObjectPart(ctx, s.bucket, key, id, number, bytes.NewReader(part), int64(len(part)), popts)
		if err != nil {
			return s.explain(err, key)
		}
		parts = append(parts, minio.CompletePart{PartNumber: number, ETag: p.ETag})
		n, _, err := bufpool.Prefetch(r, buf)
		if err != nil {
			return err
		}
		part = buf[:n]
	}
	if _, err := core.CompleteMultipartUpload(ctx, s.bucket, key, id, parts, opts); err != nil {
		return s.explain(err, key)
	}
	return nil
}

// abortTimeout bounds the abort of a failed upload.
const abortTimeout = 30 * time.Second

// payloadHash is what a request carrying p, held whole, is signed with: over plain HTTP p's
// SHA-256 (hashed true), so that one signature protects the bytes, where minio-go would sign
// them as a stream (aws-chunked); over HTTPS nothing, as minio-go leaves it: TLS protects them.
func (s *Store) payloadHash(p []byte) (sum string, hashed bool) {
	if s.c.EndpointURL().Scheme != "http" {
		return "", false
	}
	return sha256Hex(p), true
}

func sha256Hex(p []byte) string {
	h := sha256.Sum256(p)
	return hex.EncodeToString(h[:])
}
