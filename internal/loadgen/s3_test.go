package loadgen

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/mlkube/mlkube/internal/s3test"
)

// The store benchmark's jobs against a real S3 server: the seeded objects all differ, the plain
// program puts the MD5 of each, and the check accepts exactly that: a wrong or missing result
// fails it, naming the result.
func TestS3JobsAgainstARealServer(t *testing.T) {
	srv := s3test.Start(t)
	admin := srv.Bucket(t, "out")
	ctx := context.Background()
	open := func(bucket string) *S3 {
		s, err := OpenS3(srv.Endpoint, bucket, srv.AccessKey, srv.SecretKey)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	in, out := open("raw"), open("out")
	if err := in.Seed(ctx, "img/", 20, 4096, 3); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if bytes.Equal(SeedObject(0, 4096), SeedObject(1, 4096)) {
		t.Fatal("two seeded objects are equal")
	}
	r, err := in.MD5(ctx, "img/", out, "sums/", 4)
	if err != nil || r.Objects != 20 || r.Bytes != 20*4096 || r.Elapsed <= 0 || r.CPU <= 0 {
		t.Fatalf("MD5: %+v, %v; want 20 objects of 4096 bytes, and the CPU spent", r, err)
	}
	if n, err := in.CheckMD5(ctx, "img/", out, "sums/", 2); n != 20 || err != nil {
		t.Fatalf("CheckMD5 of the plain program's results: %d, %v", n, err)
	}
	if _, err := admin.PutObject(ctx, "out", "sums/00007.bin", strings.NewReader("0123456789abcdef0123456789abcdef"), 32, minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := in.CheckMD5(ctx, "img/", out, "sums/", 2); err == nil || !strings.Contains(err.Error(), "result sums/00007.bin of img/00007.bin") {
		t.Errorf("CheckMD5 with a wrong result: %v; want it named", err)
	}
	if _, err := in.CheckMD5(ctx, "img/", out, "none/", 2); err == nil || !strings.Contains(err.Error(), "none/000") {
		t.Errorf("CheckMD5 with no results: %v; want a missing one named", err)
	}
	if err := in.Seed(ctx, "x/", 0, 1, 1); err == nil {
		t.Error("Seed of no objects: want a refusal")
	}
}
