// Package s3test runs a real S3 server for tests: versitygw (pinned by hack/build/versitygw),
// serving a temporary directory on a loopback port, found through $MLKUBE_S3_SERVER, which
// `make test` sets to the pinned build.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// EnvServer names the versitygw binary.
const EnvServer = "MLKUBE_S3_SERVER"

// Server is a running S3 server and its root keys.
type Server struct {
	// Endpoint is http://127.0.0.1:PORT.
	Endpoint, Region     string
	AccessKey, SecretKey string
	host                 string
	admin                *minio.Client
}

// Start runs a server for t, stopped when t ends. Without $MLKUBE_S3_SERVER the test is
// skipped, or fails when $MLKUBE_REQUIRE_ENVTEST is set (as make test sets both).
func Start(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(EnvServer)
	if bin == "" {
		if os.Getenv("MLKUBE_REQUIRE_ENVTEST") != "" {
			t.Fatalf("$%s is not set: it names the S3 server the test runs (make test sets it: hack/build/pinned.sh versitygw)", EnvServer)
		}
		t.Skipf("$%s is not set (make test sets it)", EnvServer)
	}
	dir := t.TempDir()
	for _, d := range []string{"data", "meta"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	s := &Server{Endpoint: "http://" + host, Region: "us-east-1", AccessKey: "root" + token(4), SecretKey: token(20), host: host}
	ctx, cancel := context.WithCancel(context.Background())
	// --keep-alive: as S3 services do (versitygw closes each connection after its answer otherwise).
	cmd := exec.CommandContext(ctx, bin, "--port", host, "--region", s.Region, "--health", "/health", "--quiet", "--keep-alive",
		"posix", "--sidecar", filepath.Join(dir, "meta"), filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", bin, err)
	}
	// exited is closed once the server is gone, waitErr then says how.
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited // killed by cancel: its exit status says only that
		log.Close()
	})
	// Ready once it answers its health path.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(s.Endpoint + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("%s exited before answering: %v\n%s", bin, waitErr, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log.Name())
			t.Fatalf("%s did not answer %s/health within 30s: %v\n%s", bin, s.Endpoint, err, out)
		}
	}
	s.admin, err = minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: s.Region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Bucket creates a bucket with the root keys and returns an admin client of the server.
func (s *Server) Bucket(t testing.TB, name string) *minio.Client {
	t.Helper()
	if err := s.admin.MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: s.Region}); err != nil {
		t.Fatalf("creating bucket %s: %v", name, err)
	}
	return s.admin
}

// Admin is a client of the server with its root keys.
func (s *Server) Admin() *minio.Client { return s.admin }

// Host is the server's host:port.
func (s *Server) Host() string { return s.host }

func token(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return hex.EncodeToString(b)
}
