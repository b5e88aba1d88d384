package transformer_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/s3test"
	"github.com/mlkube/mlkube/sdk/transformer"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// newStoresServer serves fn with a stores file listing origins, as the manager writes it.
func newStoresServer(t *testing.T, fn transformer.Func, origins ...string) *transformertest.Server {
	t.Helper()
	path := filepath.Join(t.TempDir(), wire.TransformerStoresKey)
	if err := os.WriteFile(path, []byte(strings.Join(origins, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return transformertest.NewServer(t, fn, transformer.WithStoresFile(path))
}

// srcFailure fetches src through s and returns the failure the client receives.
func srcFailure(t *testing.T, s *transformertest.Server, src string) *transformertest.RemoteError {
	t.Helper()
	err := s.DoSrc(t.Context(), "o", "", src, io.Discard)
	re, ok := errors.AsType[*transformertest.RemoteError](err)
	if !ok {
		t.Fatalf("src %s: %v, want a failed object", src, err)
	}
	return re
}

// checkNoSecrets fails when msg quotes, as it is or query-escaped, src's credential, its access
// key, or a part of its signature.
func checkNoSecrets(t *testing.T, msg string, src *url.URL) {
	t.Helper()
	sig, cred := src.Query().Get("X-Amz-Signature"), src.Query().Get("X-Amz-Credential")
	key, _, _ := strings.Cut(cred, "/")
	if len(sig) < 16 || key == "" {
		t.Fatalf("src %s has no signature or credential", src)
	}
	for what, v := range map[string]string{"signature": sig[:16], "credential": cred, "access key": key} {
		if strings.Contains(msg, v) || strings.Contains(msg, url.QueryEscape(v)) {
			t.Errorf("the message quotes the %s %s: %s", what, v, msg)
		}
	}
}

func TestStoreSrcFromARealS3Server(t *testing.T) {
	srv := s3test.Start(t)
	const bucket, key = "data", "dir/obj"
	admin := srv.Bucket(t, bucket)
	want := randomBytes(300 << 10)
	if _, err := admin.PutObject(t.Context(), bucket, key, bytes.NewReader(want), int64(len(want)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	presigned, err := admin.PresignedGetObject(t.Context(), bucket, key, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	origin, err := wire.StoreOrigin(srv.Endpoint, bucket, false)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("listed", func(t *testing.T) {
		s := newStoresServer(t, echo, origin)
		var out bytes.Buffer
		if err := s.DoSrc(t.Context(), "obj", "", presigned.String(), &out); err != nil {
			t.Fatal(err)
		}
		transformertest.CheckBytes(t, out.Bytes(), want)
	})
	t.Run("not listed", func(t *testing.T) {
		var c counting
		s := newStoresServer(t, c.fn, "http://127.0.0.1:1")
		re := srcFailure(t, s, presigned.String())
		if re.Status != http.StatusBadRequest || !strings.Contains(re.Message, "origin "+origin+" is not in ") {
			t.Errorf("answer %d %q, want 400 saying the origin is not listed", re.Status, re.Message)
		}
		checkNoSecrets(t, re.Message, presigned)
		if c.calls.Load() != 0 {
			t.Error("the Func ran")
		}
	})
	t.Run("tampered signature", func(t *testing.T) {
		tampered := *presigned
		q := tampered.Query()
		sig := q.Get("X-Amz-Signature")
		last := "0"
		if strings.HasSuffix(sig, last) {
			last = "1"
		}
		// One character off, as S3 servers echo it (SignatureProvided): most of the capability.
		q.Set("X-Amz-Signature", sig[:len(sig)-1]+last)
		tampered.RawQuery = q.Encode()
		s := newStoresServer(t, echo, origin)
		re := srcFailure(t, s, tampered.String())
		if re.Status != http.StatusForbidden || !strings.Contains(re.Message, "SignatureDoesNotMatch: ") {
			t.Errorf("answer %d %q, want the store's 403 and its error code passed on", re.Status, re.Message)
		}
		checkNoSecrets(t, re.Message, presigned)
		checkNoSecrets(t, re.Message, &tampered)
	})
}

// A store is a third party: the fetch carries none of the agent's credential.
func TestStoreSrcIsFetchedWithoutTheAgentsToken(t *testing.T) {
	var got http.Header
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		io.WriteString(w, "object")
	}))
	t.Cleanup(store.Close)
	s := newStoresServer(t, echo, store.URL)
	var out strings.Builder
	if err := s.DoSrc(t.Context(), "o", "", store.URL+"/b/k?X-Amz-Signature=0", &out); err != nil || out.String() != "object" {
		t.Fatalf("store src: %q, %v", out.String(), err)
	}
	for _, name := range []string{wire.HeaderTransformerToken, "Authorization", "Cookie"} {
		if v := got.Get(name); v != "" {
			t.Errorf("the fetch sent %s: %q", name, v)
		}
	}
}

// Whatever way a presigned src fails, refused or unreachable, the message the client gets keeps
// none of its secrets: net/http's errors quote the whole URL.
func TestStoreSrcErrorsAreRedacted(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close() // nothing listens there any more: the fetch fails to dial
	src, err := url.Parse(closed + "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256" +
		"&X-Amz-Credential=AKIDSECRET%2F20250101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20250101T000000Z" +
		"&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=0123456789abcdef0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		listed string
		status int
	}{
		"unreachable": {listed: closed, status: http.StatusBadGateway},
		"not listed":  {listed: "http://127.0.0.1:1", status: http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			re := srcFailure(t, newStoresServer(t, echo, tc.listed), src.String())
			if re.Status != tc.status || !strings.Contains(re.Message, "X-Amz-Signature=REDACTED") {
				t.Errorf("answer %d %q, want %d quoting the src redacted", re.Status, re.Message, tc.status)
			}
			checkNoSecrets(t, re.Message, src)
		})
	}
}
