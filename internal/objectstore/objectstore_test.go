package objectstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/egress"
	"github.com/mlkube/mlkube/internal/s3test"
)

// loopback lets the tests' store, on 127.0.0.1, through the egress policy, as an operator's
// --object-store-allowed-cidrs does for a store inside the cluster.
var loopback = egress.Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowFlag: "--object-store-allowed-cidrs"}

func spec(endpoint, bucket string) *v1alpha1.ObjectStoreSpec {
	return &v1alpha1.ObjectStoreSpec{Endpoint: endpoint, Bucket: bucket, Region: "us-east-1", Addressing: v1alpha1.AddressingPath,
		Credentials: &v1alpha1.ObjectStoreCredentials{SecretName: v1alpha1.ObjectStoreSecretName, AccessKeyIDKey: "raw.accessKeyID", SecretAccessKeyKey: "raw.secretAccessKey"}}
}

func open(t *testing.T, sp *v1alpha1.ObjectStoreSpec, keys Keys, p egress.Policy) *Store {
	t.Helper()
	s, err := New("raw", sp, keys, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readBack checks that key holds want.
func readBack(t *testing.T, s *Store, key string, want []byte) {
	t.Helper()
	body, _, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	got, err := io.ReadAll(body)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s reads back as %d bytes (%v); want the %d written", key, len(got), err, len(want))
	}
}

func random(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// Objects go in and come back byte for byte, small ones in one PUT and one larger than a part,
// of unknown size, as a multipart upload; a listing names each with its size, in key order.
func TestPutGetListAgainstARealServer(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket(t, "raw")
	s := open(t, spec(srv.Endpoint, "raw"), Keys{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}, loopback)
	ctx := context.Background()
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	want := map[string][]byte{"a/1": random(t, 1), "a/2": random(t, 4096), "a/b/big": random(t, PartSize+12345), "z": random(t, 10)}
	for key, data := range want {
		size := int64(-1) // unknown, as a transformer's streamed answer goes up
		if key == "z" {
			size = int64(len(data))
		}
		if err := s.Put(ctx, key, bytes.NewReader(data), size); err != nil {
			t.Fatalf("Put %s: %v", key, err)
		}
	}
	for key, data := range want {
		r, size, err := s.Get(ctx, key)
		if err != nil {
			t.Fatalf("Get %s: %v", key, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, data) || size != int64(len(data)) {
			t.Errorf("Get %s: %d bytes (size %d, %v); want the %d put", key, len(got), size, err, len(data))
		}
	}
	// Of unknown size, the small objects went up in one PUT (an ETag without a part count) and
	// the large one as a multipart upload.
	for key, wantParts := range map[string]bool{"a/1": false, "a/2": false, "a/b/big": true} {
		info, err := s.c.StatObject(ctx, "raw", key, minio.StatObjectOptions{})
		if err != nil || strings.Contains(info.ETag, "-") != wantParts {
			t.Errorf("%s: ETag %q, %v; want a multipart upload's: %v", key, info.ETag, err, wantParts)
		}
	}
	var listed []string
	if err := s.List(ctx, "a/", 10, func(o Object) error {
		if o.Size != int64(len(want[o.Key])) {
			t.Errorf("listed %s of size %d; want %d", o.Key, o.Size, len(want[o.Key]))
		}
		listed = append(listed, o.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(listed) != "[a/1 a/2 a/b/big]" {
		t.Errorf("listed %v; want a/1 a/2 a/b/big", listed)
	}
	if err := s.List(ctx, "a/", 2, func(Object) error { return nil }); err == nil || !strings.Contains(err.Error(), "more than 2 objects under \"a/\"") {
		t.Errorf("a listing past its bound: %v; want it refused, naming the bound", err)
	}
	// Pages as ls shows them: grouped at "/", or every key; limit and after page through.
	for _, c := range []struct {
		prefix, delimiter, after string
		limit                    int
		want                     string
	}{
		{"", "/", "", 10, "objects [z] prefixes [a/] more false"},
		{"a/", "/", "", 10, "objects [a/1 a/2] prefixes [a/b/] more false"},
		{"a/", "", "", 10, "objects [a/1 a/2 a/b/big] prefixes [] more false"},
		{"", "", "", 2, "objects [a/1 a/2] prefixes [] more true"},
		{"", "", "a/2", 2, "objects [a/b/big z] prefixes [] more false"},
		{"nothing/", "/", "", 10, "objects [] prefixes [] more false"},
	} {
		p, err := s.ListPage(ctx, c.prefix, c.delimiter, c.after, c.limit)
		if err != nil {
			t.Fatalf("ListPage(%q, %q, %q, %d): %v", c.prefix, c.delimiter, c.after, c.limit, err)
		}
		keys := []string{}
		for _, o := range p.Objects {
			keys = append(keys, o.Key)
			if o.Size != int64(len(want[o.Key])) || o.Modified.IsZero() {
				t.Errorf("paged %s of size %d modified %v; want %d and a time", o.Key, o.Size, o.Modified, len(want[o.Key]))
			}
		}
		got := fmt.Sprintf("objects %v prefixes %v more %v", keys, append([]string{}, p.Prefixes...), p.More)
		if got != c.want {
			t.Errorf("ListPage(%q, %q, %q, %d) = %s; want %s", c.prefix, c.delimiter, c.after, c.limit, got, c.want)
		}
	}
	if _, err := s.ListPage(ctx, "", ",", "", 10); err == nil || !strings.Contains(err.Error(), `at "/" or not at all`) {
		t.Errorf("a page grouped at \",\": %v; want it refused", err)
	}
	if ok, err := s.Exists(ctx, "a/2"); !ok || err != nil {
		t.Errorf("Exists(a/2) = %v, %v; want true", ok, err)
	}
	if ok, err := s.Exists(ctx, "nope"); ok || err != nil {
		t.Errorf("Exists(nope) = %v, %v; want false", ok, err)
	}
	if _, _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `object "nope": it does not exist`) {
		t.Errorf("Get(nope): %v; want ErrNotFound naming the object", err)
	}
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// A GET is one request, with no HEAD before it; and a reader that takes exactly an object's size
// and closes it, as a run's transformer request does, leaves the connection to the next GET: 20
// GETs in a row are 20 requests on one connection, not 20 connections. The store is reached
// through a proxy that counts both.
func TestGetsAreOneRequestOnOneConnection(t *testing.T) {
	s, rec := proxiedStore(t)
	ctx := context.Background()
	data := random(t, 100<<10)
	if err := s.Put(ctx, "obj", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	rec.taken()
	before := rec.accepted.Load()
	for i := range 20 {
		body, size, err := s.Get(ctx, "obj")
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, size)
		if _, err := io.ReadFull(body, got); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("GET %d: %v", i, err)
		}
		body.Close()
	}
	if n := rec.accepted.Load() - before; n > 1 {
		t.Errorf("20 GETs read to their size took %d new connections; want at most 1", n)
	}
	var methods []string
	for _, r := range rec.taken() {
		methods = append(methods, r.method)
	}
	if want := slices.Repeat([]string{http.MethodGet}, 20); !slices.Equal(methods, want) {
		t.Errorf("20 GETs sent %v; want 20 GETs and nothing else", methods)
	}
}

// TestResultsGoUpInOnePUTSignedWithTheirHash: an object of unknown size that ends within a part
// (a transform's result) goes up over plain HTTP as one PUT whose signature covers its SHA-256,
// not as a stream signed chunk by chunk; it reads back as written.
func TestResultsGoUpInOnePUTSignedWithTheirHash(t *testing.T) {
	s, rec := proxiedStore(t)
	ctx := context.Background()
	// Up to HeadSize from the pooled head; past it, from the buffer of a large Put.
	for _, size := range []int{0, 32, 300 << 10, HeadSize, HeadSize + 1, 3 << 20} {
		data := random(t, size)
		key := fmt.Sprintf("result-%d", size)
		rec.taken()
		if err := s.Put(ctx, key, io.MultiReader(bytes.NewReader(data)), -1); err != nil {
			t.Fatalf("Put of %d bytes: %v", size, err)
		}
		sum := sha256.Sum256(data)
		got := rec.taken()
		if len(got) != 1 || got[0].method != http.MethodPut || got[0].sha256 != hex.EncodeToString(sum[:]) || got[0].encoding != "" {
			t.Errorf("a result of %d bytes went up as %+v; want one PUT, X-Amz-Content-Sha256 %x, no aws-chunked encoding", size, got, sum)
		}
		readBack(t, s, key, data)
	}
}

// recorded is a request as a recordingProxy saw it.
type recorded struct{ method, sha256, encoding string }

// recorder holds what a recordingProxy saw: the requests, and the connections it accepted.
type recorder struct {
	mu       sync.Mutex
	requests []recorded
	*countingListener
}

// taken returns the requests seen since the last call, and forgets them.
func (r *recorder) taken() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.requests
	r.requests = nil
	return out
}

// proxiedStore is the store of the bucket raw of a new S3 server, reached through a
// recordingProxy.
func proxiedStore(t *testing.T) (*Store, *recorder) {
	srv := s3test.Start(t)
	srv.Bucket(t, "raw")
	proxy, rec := recordingProxy(t, srv)
	return open(t, spec(proxy, "raw"), Keys{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}, loopback), rec
}

// recordingProxy is a reverse proxy to srv that records each request and counts connections.
func recordingProxy(t *testing.T, srv *s3test.Server) (string, *recorder) {
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	forward := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // as signed
	}}
	rec := &recorder{}
	proxy := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.requests = append(rec.requests, recorded{r.Method, r.Header.Get("X-Amz-Content-Sha256"), r.Header.Get("Content-Encoding")})
		rec.mu.Unlock()
		forward.ServeHTTP(w, r)
	}))
	rec.countingListener = &countingListener{Listener: proxy.Listener}
	proxy.Listener = rec.countingListener
	proxy.Start()
	t.Cleanup(proxy.Close)
	return proxy.URL, rec
}

// Each way a store cannot be used ends in ErrStore with a reason that says what to do, and no
// message carries the secret key.
func TestUnusableStoresSayWhy(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket(t, "raw")
	good := Keys{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedEndpoint := "http://" + closed.Addr().String()
	closed.Close()
	cases := map[string]struct {
		spec   *v1alpha1.ObjectStoreSpec
		keys   Keys
		policy egress.Policy
		want   string
	}{
		"a wrong secret key":   {spec(srv.Endpoint, "raw"), Keys{AccessKeyID: srv.AccessKey, SecretAccessKey: "wrong-secret-0123456789"}, loopback, "the store refused its keys (SignatureDoesNotMatch)"},
		"an unknown key ID":    {spec(srv.Endpoint, "raw"), Keys{AccessKeyID: "nobody", SecretAccessKey: "wrong-secret-0123456789"}, loopback, "the store refused its keys ("},
		"a missing bucket":     {spec(srv.Endpoint, "missing"), good, loopback, "ObjectStore raw (bucket missing at " + srv.Endpoint + "): the bucket does not exist: create it, or fix spec.bucket"},
		"nothing listening":    {spec(closedEndpoint, "raw"), good, loopback, "the endpoint cannot be reached"},
		"loopback not allowed": {spec(srv.Endpoint, "raw"), good, egress.Policy{AllowFlag: "--object-store-allowed-cidrs"}, "refused by the agent's egress policy: address 127.0.0.1 is loopback, link-local, unspecified or multicast; the operator allows a network explicitly with --object-store-allowed-cidrs"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := open(t, tc.spec, tc.keys, tc.policy).Check(context.Background())
			if !errors.Is(err, ErrStore) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v; want ErrStore saying %q", err, tc.want)
			}
			for _, secret := range []string{tc.keys.SecretAccessKey, srv.SecretKey} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error carries a secret key: %v", err)
				}
			}
		})
	}
	// Anonymous requests to a private bucket are denied, and said so.
	anon := spec(srv.Endpoint, "raw")
	anon.Anonymous, anon.Credentials = true, nil
	err = open(t, anon, Keys{}, loopback).Put(context.Background(), "x", strings.NewReader("x"), 1)
	if !errors.Is(err, ErrStore) || !strings.Contains(err.Error(), "the store denied access (AccessDenied)") {
		t.Errorf("an anonymous PUT: %v; want ErrStore naming AccessDenied", err)
	}
}

// A message that would carry a key has it replaced.
func TestRedact(t *testing.T) {
	s := &Store{keys: Keys{AccessKeyID: "AKIA", SecretAccessKey: "s3cr3t", SessionToken: "tok3n"}}
	if got := s.redact("a s3cr3t and a tok3n of AKIA"); got != "a <redacted> and a <redacted> of AKIA" {
		t.Errorf("redact = %q", got)
	}
}

func TestKeysFrom(t *testing.T) {
	sp := spec("http://s3:8333", "raw")
	data := map[string][]byte{"raw.accessKeyID": []byte("AKIA\n"), "raw.secretAccessKey": []byte("s3cr3t")}
	k, err := KeysFrom("raw", sp, data)
	if err != nil || k != (Keys{AccessKeyID: "AKIA", SecretAccessKey: "s3cr3t"}) {
		t.Errorf("KeysFrom = %+v, %v; want the two keys, trimmed", k, err)
	}
	data["raw.secretAccessKey"] = []byte(" \n")
	if _, err = KeysFrom("raw", sp, data); err == nil || !strings.Contains(err.Error(), `no key "raw.secretAccessKey", or only white space in it`) {
		t.Errorf("a key of only white space: %v; want it refused, not used as an empty key that signs nothing", err)
	}
	delete(data, "raw.secretAccessKey")
	_, err = KeysFrom("raw", sp, data)
	if err == nil || !strings.Contains(err.Error(), `the Secret mlkube-object-stores has no key "raw.secretAccessKey"`) {
		t.Errorf("a missing key: %v; want it named with the Secret", err)
	}
	sp.Anonymous, sp.Credentials = true, nil
	if k, err := KeysFrom("raw", sp, nil); err != nil || k != (Keys{}) {
		t.Errorf("anonymous: %+v, %v; want no keys", k, err)
	}
}

// Listings stopped early leave nothing running: a page cut at its limit, a run's walk ended by
// its callback and a store check each return with no goroutine of minio-go's left behind (its
// ListObjects channel would keep one, and its page, per listing). The S3 consoles' empty
// "folder" objects are not objects of a run.
func TestListingsStoppedEarlyLeaveNothingRunning(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket(t, "raw")
	s := open(t, spec(srv.Endpoint, "raw"), Keys{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}, loopback)
	ctx := context.Background()
	for _, key := range []string{"a/1", "a/2", "a/3", "a/sub/4"} {
		if err := s.Put(ctx, key, bytes.NewReader([]byte(key)), int64(len(key))); err != nil {
			t.Fatalf("Put %s: %v", key, err)
		}
	}
	// The folder as a console makes it: an empty object whose key ends in "/". It goes up on a
	// client of its own: versitygw answers the next request on the connection of an empty PUT
	// with a 400, which is the server's matter, not this test's.
	folder := open(t, spec(srv.Endpoint, "raw"), Keys{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}, loopback)
	if _, err := folder.c.PutObject(ctx, "raw", "a/sub/", bytes.NewReader(nil), 0, minio.PutObjectOptions{}); err != nil {
		t.Fatalf("Put a/sub/: %v", err)
	}
	stop := errors.New("enough")
	listings := func() {
		if _, err := s.ListPage(ctx, "a/", "", "", 1); err != nil {
			t.Fatal(err)
		}
		if err := s.List(ctx, "a/", 10, func(Object) error { return stop }); !errors.Is(err, stop) {
			t.Fatalf("List: %v; want the callback's error", err)
		}
		if err := s.Check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	listings() // the transport's connection and its goroutines are made here, once
	before := runtime.NumGoroutine()
	for range 50 {
		listings()
	}
	// A leak is one goroutine per listing, 150 here; a connection more or less is 2.
	if after := runtime.NumGoroutine(); after > before+10 {
		t.Errorf("%d goroutines after 150 listings stopped early, %d before", after, before)
	}
	var listed []string
	if err := s.List(ctx, "a/", 10, func(o Object) error { listed = append(listed, o.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(listed) != "[a/1 a/2 a/3 a/sub/4]" {
		t.Errorf("listed %v; want every object but the folder a/sub/", listed)
	}
}

// An endpoint whose listing answer does not end is cut at maxListingBytes with an error that
// says so, instead of filling the agent.
func TestListingAnswerIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.Query().Has("list-type") {
			http.Error(w, "not a listing", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>raw</Name><IsTruncated>false</IsTruncated>`)
		entry := []byte(`<Contents><Key>k</Key><Size>1</Size></Contents>`)
		for r.Context().Err() == nil {
			if _, err := w.Write(entry); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	s := open(t, spec(srv.URL, "raw"), Keys{AccessKeyID: "AKIA", SecretAccessKey: "s3cr3t"}, loopback)
	_, err := s.ListPage(context.Background(), "", "", "", 10)
	if err == nil || !strings.Contains(err.Error(), "passed 16 MiB") || !strings.Contains(err.Error(), "ObjectStore raw") {
		t.Errorf("an endless listing: %v; want it cut, naming the store and the bound", err)
	}
}

// A presigned GET is made without asking the store anything, reads the object byte for byte
// without keys for as long as it was signed, and reads nothing once the signature is changed; a
// store of a CA bundle of its own presigns nothing, since a transformer would not trust it.
func TestPresignedGetsReadWithoutKeys(t *testing.T) {
	srv := s3test.Start(t)
	srv.Bucket(t, "raw")
	keys := Keys{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	s := open(t, spec(srv.Endpoint, "raw"), keys, loopback)
	ctx := context.Background()
	data := random(t, 300<<10)
	if err := s.Put(ctx, "in/a b+c.bin", bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatal(err)
	}
	// Presigning sends nothing: a store whose endpoint nobody listens on presigns all the same.
	closed := open(t, spec("http://127.0.0.1:1", "raw"), keys, loopback)
	if u, err := closed.Presign(ctx, "in/x", time.Minute); err != nil || !strings.HasPrefix(u, "http://127.0.0.1:1/raw/in/x?") {
		t.Fatalf("presigning against a closed port: %q, %v; want a URL and no request", u, err)
	}
	// Rounded up to the whole seconds SigV4 counts in.
	var q *url.URL
	for d, want := range map[time.Duration]string{300 * time.Millisecond: "1", 1100 * time.Millisecond: "2", 30 * 24 * time.Hour: "604800"} {
		u, err := s.Presign(ctx, "in/a b+c.bin", d)
		if err != nil {
			t.Fatal(err)
		}
		if q, err = url.Parse(u); err != nil {
			t.Fatal(err)
		}
		if got := q.Query().Get("X-Amz-Expires"); got != want {
			t.Errorf("presigned for %v: X-Amz-Expires = %q, want %s", d, got, want)
		}
	}
	if strings.Contains(q.String(), srv.SecretKey) {
		t.Error("the presigned URL holds the secret key")
	}
	get := func(u string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	u, err := s.Presign(ctx, "in/a b+c.bin", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if code, got := get(u); code != http.StatusOK || !bytes.Equal(got, data) {
		t.Fatalf("GET of the presigned URL: %d, %d bytes; want 200 and the object's %d", code, len(got), len(data))
	}
	sig := q.Query().Get("X-Amz-Signature")
	forged := strings.Replace(u, "X-Amz-Signature=", "X-Amz-Signature=0", 1)
	if code, _ := get(forged); code != http.StatusForbidden {
		t.Errorf("GET with a changed signature %s: %d, want 403", sig, code)
	}
	withCA := spec(srv.Endpoint, "raw")
	tls := httptest.NewTLSServer(http.NotFoundHandler())
	tls.Close()
	withCA.CABundle = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tls.Certificate().Raw}))
	if u, err := open(t, withCA, keys, loopback).Presign(ctx, "in/a b+c.bin", time.Minute); u != "" || err != nil {
		t.Errorf("a store with a caBundle presigned %q, %v; want none", u, err)
	}
}
