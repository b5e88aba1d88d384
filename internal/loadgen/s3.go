package loadgen

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3 is a bucket of an S3 server as the store benchmark reaches it: plain minio-go, path-style,
// the way a user's own program would, with none of mlkube's client around it.
type S3 struct {
	c      *minio.Client
	bucket string
}

// MaxS3Objects bounds what one S3 job seeds, transforms or checks.
const MaxS3Objects = 100000

// OpenS3 reaches bucket at endpoint (http or https URL) with the given keys.
func OpenS3(endpoint, bucket, accessKey, secretKey string) (*S3, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("S3 endpoint %q: want http(s)://host[:port]", endpoint)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Secure: u.Scheme == "https",
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return nil, err
	}
	return &S3{c: c, bucket: bucket}, nil
}

// SeedObject is the content of object i of a seeded set: Payload(size) stamped with i, so that
// every object, and so every digest, differs.
func SeedObject(i, size int) []byte {
	b := Payload(size)
	if size >= 8 {
		binary.BigEndian.PutUint64(b, uint64(i))
	}
	return b
}

// SeedKey is the key of object i under prefix.
func SeedKey(prefix string, i int) string { return fmt.Sprintf("%s%05d.bin", prefix, i) }

// Seed makes the bucket when it is missing and puts n objects of size bytes under prefix
// (SeedKey, SeedObject), workers at a time.
func (s *S3) Seed(ctx context.Context, prefix string, n, size, workers int) error {
	if n < 1 || n > MaxS3Objects || size < 0 || size > MaxSize {
		return fmt.Errorf("seed: %d objects of %d bytes: want 1..%d objects of at most %d bytes", n, size, MaxS3Objects, MaxSize)
	}
	if err := s.Ensure(ctx); err != nil {
		return err
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = SeedKey(prefix, i)
	}
	return each(ctx, keys, workers, func(i int, key string) error {
		data := SeedObject(i, size)
		_, err := s.c.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
		return err
	})
}

// Ensure makes the bucket when it is missing.
func (s *S3) Ensure(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", s.bucket, err)
	}
	if !ok {
		if err := s.c.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{}); err != nil {
			return fmt.Errorf("making bucket %s: %w", s.bucket, err)
		}
	}
	return nil
}

// S3Result is what one job did: how many objects and bytes it read, and in how long.
type S3Result struct {
	Objects int64         `json:"objects"`
	Bytes   int64         `json:"bytes"`
	Elapsed time.Duration `json:"elapsed"`
	// CPU is the CPU time the process had spent when the job ended, user and kernel: a job
	// runs in a process of its own, so the benchmark sets it against the CPU of a run's parts.
	CPU time.Duration `json:"cpu"`
}

// processCPU is the CPU time this process has spent, user and kernel (0 where it can't be read).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MD5 is the plain program the store benchmark measures a TransformRun against: it lists the
// keys under prefix, and workers at a time GETs each, takes its MD5 (hex, as the md5 transformer
// answers) and PUTs that into to under toPrefix in place of prefix. The clock runs from the
// listing to the last PUT.
func (s *S3) MD5(ctx context.Context, prefix string, to *S3, toPrefix string, workers int) (S3Result, error) {
	start := time.Now()
	keys, err := s.keys(ctx, prefix)
	if err != nil {
		return S3Result{}, err
	}
	var mu sync.Mutex
	var r S3Result
	err = each(ctx, keys, workers, func(_ int, key string) error {
		o, err := s.c.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		h := md5.New()
		n, err := io.Copy(h, o)
		o.Close()
		if err != nil {
			return err
		}
		sum := []byte(hex.EncodeToString(h.Sum(nil)))
		if _, err := to.c.PutObject(ctx, to.bucket, toPrefix+strings.TrimPrefix(key, prefix), bytes.NewReader(sum), int64(len(sum)), minio.PutObjectOptions{}); err != nil {
			return err
		}
		mu.Lock()
		r.Objects++
		r.Bytes += n
		mu.Unlock()
		return nil
	})
	r.Elapsed, r.CPU = time.Since(start), processCPU()
	return r, err
}

// CheckMD5 reads every object under prefix and its result under toPrefix of to, workers at a
// time, and fails unless each result is the object's MD5 (hex). It returns how many it checked.
func (s *S3) CheckMD5(ctx context.Context, prefix string, to *S3, toPrefix string, workers int) (int, error) {
	keys, err := s.keys(ctx, prefix)
	if err != nil {
		return 0, err
	}
	if len(keys) == 0 {
		return 0, fmt.Errorf("no objects under %s in bucket %s to check", prefix, s.bucket)
	}
	err = each(ctx, keys, workers, func(_ int, key string) error {
		want, err := s.digest(ctx, key)
		if err != nil {
			return err
		}
		rkey := toPrefix + strings.TrimPrefix(key, prefix)
		o, err := to.c.GetObject(ctx, to.bucket, rkey, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer o.Close()
		got, err := io.ReadAll(io.LimitReader(o, 1024))
		if err != nil {
			return fmt.Errorf("result %s of %s: %w", rkey, key, err)
		}
		if string(got) != want {
			return fmt.Errorf("result %s of %s is %.64q; want its MD5 %s", rkey, key, got, want)
		}
		return nil
	})
	return len(keys), err
}

func (s *S3) digest(ctx context.Context, key string) (string, error) {
	o, err := s.c.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return "", err
	}
	defer o.Close()
	h := md5.New()
	if _, err := io.Copy(h, o); err != nil {
		return "", fmt.Errorf("object %s: %w", key, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// keys lists every key under prefix, at most MaxS3Objects.
func (s *S3) keys(ctx context.Context, prefix string) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var keys []string
	for o := range s.c.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("listing %s in bucket %s: %w", prefix, s.bucket, o.Err)
		}
		if len(keys) == MaxS3Objects {
			return nil, fmt.Errorf("more than %d objects under %s in bucket %s", MaxS3Objects, prefix, s.bucket)
		}
		keys = append(keys, o.Key)
	}
	return keys, nil
}

// each calls fn with every key, workers at a time, and returns the first error (naming its key);
// the others stop at it.
func each(ctx context.Context, keys []string, workers int, fn func(i int, key string) error) error {
	if workers < 1 {
		return errors.New("workers: want at least 1")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(keys)) {
		wg.Go(func() {
			for i := range next {
				if err := fn(i, keys[i]); err != nil {
					cancel(fmt.Errorf("%s: %w", keys[i], err))
				}
			}
		})
	}
feed:
	for i := range keys {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
