// Package objectstore is mlkube's client of one ObjectStore: a bucket of an S3-compatible
// endpoint, reached with minio-go through the agent's egress policy (only the store's own host,
// every dialled address checked, no proxy, no redirect), with the store's keys from the
// namespace's Secret. Its errors name the store, the bucket and what to do, and never carry the
// keys (docs/design/object-stores.md).
package objectstore

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/egress"
)

// PartSize is the part of a multipart upload: objects larger than it, or of unknown size, go up
// in parts of this size (minio-go would pick about 500 MiB parts for an unknown size).
const PartSize = 16 << 20

// headerTimeout bounds the wait for a store's answer headers; bodies are bounded by the
// caller's context.
const headerTimeout = 30 * time.Second

// pageTimeout bounds a page of a listing as a whole, so that a store that trickles its answer
// cannot hold one of an agent's few listing slots.
const pageTimeout = time.Minute

// Keys are a store's credentials.
type Keys struct {
	AccessKeyID, SecretAccessKey, SessionToken string
}

// KeysFrom reads the keys that spec names from data, the namespace's Secret of store keys; store
// names the ObjectStore in errors. An anonymous store has none.
func KeysFrom(store string, spec *v1alpha1.ObjectStoreSpec, data map[string][]byte) (Keys, error) {
	if spec.Anonymous {
		return Keys{}, nil
	}
	c := spec.Credentials
	if c == nil {
		return Keys{}, fmt.Errorf("ObjectStore %s names no credentials and is not anonymous", store)
	}
	get := func(key string, required bool) (string, error) {
		// Trimmed first: a value of only a newline would otherwise sign nothing.
		v := strings.TrimSpace(string(data[key]))
		switch {
		case key == "" && !required:
			return "", nil
		case v == "":
			return "", fmt.Errorf("ObjectStore %s: the Secret %s has no key %q, or only white space in it; add it (kubectl create secret generic %s --from-literal=%s=...)",
				store, c.SecretName, key, c.SecretName, key)
		}
		return v, nil
	}
	var k Keys
	var err error
	if k.AccessKeyID, err = get(c.AccessKeyIDKey, true); err != nil {
		return Keys{}, err
	}
	if k.SecretAccessKey, err = get(c.SecretAccessKeyKey, true); err != nil {
		return Keys{}, err
	}
	if k.SessionToken, err = get(c.SessionTokenKey, false); err != nil {
		return Keys{}, err
	}
	return k, nil
}

// Store is a client of one ObjectStore's bucket.
type Store struct {
	name, bucket, endpoint string
	keys                   Keys
	c                      *minio.Client
	// presigns: a URL this client signs can be handed to a transformer, which trusts the
	// system's CAs only; a store of a caBundle of its own is read by the agent.
	presigns bool
	// large bounds the large Puts of unknown size this store shares with others; nil: none.
	large LargePuts
}

// New returns a client of the ObjectStore name (defaulted spec, as the webhook stored it), signed
// with keys, that dials only what policy allows: the policy's hosts are replaced by the
// endpoint's own host.
func New(name string, spec *v1alpha1.ObjectStoreSpec, keys Keys, policy egress.Policy, large LargePuts) (*Store, error) {
	u, err := url.Parse(spec.Endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("ObjectStore %s: endpoint %q is not a URL of a host", name, spec.Endpoint)
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if spec.CABundle != "" {
		tlsConfig.RootCAs = x509.NewCertPool()
		if !tlsConfig.RootCAs.AppendCertsFromPEM([]byte(spec.CABundle)) {
			return nil, fmt.Errorf("ObjectStore %s: spec.caBundle holds no PEM certificate", name)
		}
	}
	policy.Hosts = []string{strings.ToLower(u.Hostname())}
	lookup := minio.BucketLookupPath
	if spec.Addressing == v1alpha1.AddressingVirtualHost {
		lookup = minio.BucketLookupDNS
	}
	creds := credentials.NewStaticV4(keys.AccessKeyID, keys.SecretAccessKey, keys.SessionToken)
	if spec.Anonymous {
		creds = credentials.New(&credentials.Static{Value: credentials.Value{SignerType: credentials.SignatureAnonymous}})
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:        creds,
		Secure:       u.Scheme == "https",
		Transport:    boundedListings{policy.Transport(headerTimeout, tlsConfig)},
		Region:       spec.Region, // given, so no request asks the bucket's location first
		BucketLookup: lookup,
		// A store that refuses or cannot be reached is reported, not retried for minutes; the
		// run retries what failed on its own terms.
		MaxRetries: 3,
	})
	if err != nil {
		return nil, fmt.Errorf("ObjectStore %s: %w", name, err)
	}
	return &Store{name: name, bucket: spec.Bucket, endpoint: spec.Endpoint, keys: keys, c: c, presigns: spec.CABundle == "", large: large}, nil
}

// maxListingBytes bounds the body of one listing answer. A page holds at most 1,000 keys of at
// most 1,024 bytes, a few MiB of XML with their sizes, dates and ETags; minio-go decodes the
// answer as it reads it, so without a bound one store's endless answer would fill the agent.
const maxListingBytes = 16 << 20

var errListingTooLarge = fmt.Errorf("the store's answer to a listing passed %d MiB, more than a page of 1,000 keys can take: the endpoint is not an S3 service, or it is broken", maxListingBytes>>20)

// boundedListings bounds the body of every listing answer (a GET with S3's list-type query) by
// maxListingBytes.
type boundedListings struct{ http.RoundTripper }

func (t boundedListings) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.RoundTripper.RoundTrip(req)
	// A substring test: parsing the query would cost a map on every object's GET.
	if err != nil || req.Method != http.MethodGet || !strings.Contains(req.URL.RawQuery, "list-type=") {
		return resp, err
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: maxListingBytes}
	return resp, nil
}

// cappedBody fails with errListingTooLarge once more than left bytes have been read.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errListingTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return n, errListingTooLarge
	}
	return n, err
}

// Object is one object of a listing.
type Object struct {
	Key      string
	Size     int64
	Modified time.Time
}

// Check reaches the bucket with the store's keys: nil, or why the store cannot be used (keys
// refused, no such bucket, endpoint unreachable or refused by the egress policy). It lists one
// key: a HEAD of the bucket would be cheaper, but its answer has no body, so every refusal of
// the keys would read as a bare 403 or 404.
func (s *Store) Check(ctx context.Context) error {
	// The first answer is enough: an object, or the error that ends the listing.
	next, stop := iter.Pull(s.c.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{MaxKeys: 1}))
	defer stop()
	if o, ok := next(); ok && o.Err != nil {
		return s.explain(o.Err, "")
	}
	return nil
}

// List calls fn with each object under prefix, in key order, at most max of them (an error past
// it, so that a run never plans an unbounded list). A key that ends in "/" is skipped: it is the
// empty "folder" object S3 consoles create, which names no file a run could read or write.
//
// The listings here use minio-go's iterator, which lists as the loop asks and stops with it: its
// ListObjects channel keeps a goroutine, and the page it holds, for good when the reader stops
// early and the channel's one slot is full.
func (s *Store) List(ctx context.Context, prefix string, max int, fn func(Object) error) error {
	n := 0
	for o := range s.c.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return s.explain(o.Err, prefix)
		}
		if strings.HasSuffix(o.Key, "/") {
			continue
		}
		if n++; n > max {
			return fmt.Errorf("ObjectStore %s: more than %d objects under %q in bucket %s: name a narrower prefix", s.name, max, prefix, s.bucket)
		}
		if err := fn(Object{Key: o.Key, Size: o.Size}); err != nil {
			return err
		}
	}
	return nil
}

// Page is one page of a listing: the objects, and with a delimiter the prefixes that group the
// keys below them; More says keys follow the last entry.
type Page struct {
	Objects  []Object
	Prefixes []string
	More     bool
}

// ListPage pages through the keys under prefix that sort after after, in key order, at most limit
// entries; with delimiter "/" the keys below the next "/" come as one prefix each, as a
// directory listing shows them (S3's listing groups at "/" only).
func (s *Store) ListPage(ctx context.Context, prefix, delimiter, after string, limit int) (Page, error) {
	if delimiter != "" && delimiter != "/" {
		return Page{}, fmt.Errorf("ObjectStore %s: a listing groups names at \"/\" or not at all, not at %q", s.name, delimiter)
	}
	ctx, cancel := context.WithTimeout(ctx, pageTimeout)
	defer cancel()
	var p Page
	opts := minio.ListObjectsOptions{Prefix: prefix, Recursive: delimiter == "", StartAfter: after}
	for o := range s.c.ListObjectsIter(ctx, s.bucket, opts) {
		switch {
		case o.Err != nil:
			return Page{}, s.explain(o.Err, prefix)
		case len(p.Objects)+len(p.Prefixes) == limit:
			p.More = true
			return p, nil
		case delimiter != "" && strings.HasSuffix(o.Key, delimiter) && o.ETag == "":
			// minio-go sends each common prefix as an object with its key and nothing else.
			p.Prefixes = append(p.Prefixes, o.Key)
		default:
			p.Objects = append(p.Objects, Object{Key: o.Key, Size: o.Size, Modified: o.LastModified})
		}
	}
	return p, nil
}

// Get opens object key and returns its body and size; the caller closes it.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	// Core's GetObject is the GET alone, its answer's body read as it comes. The Client's would
	// first send a HEAD for the size, then read the body through a goroutine of its own, a
	// channel round trip per Read: three requests' worth of work where one does.
	body, info, _, err := minio.Core{Client: s.c}.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, s.explain(err, key)
	}
	return body, info.Size, nil
}

// Put writes r as object key, size bytes or -1 when unknown; objects larger than PartSize go up
// as a multipart upload, which the store makes visible only once complete. An object of unknown
// size (a transform's result) is read up to PartSize first, within the store's LargePuts past
// HeadSize (putUnknown): one that ends by then goes up in one PUT, not as a multipart upload of
// one part, which takes three requests.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if size < 0 {
		return s.putUnknown(ctx, key, r)
	}
	_, err := s.c.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{PartSize: PartSize, ContentType: "application/octet-stream"})
	if err != nil {
		return s.explain(err, key)
	}
	return nil
}

// putWhole writes data, held whole, as object key in one PUT signed as payloadHash says. Signed
// as a stream, a signature per 64 KiB chunk and a chunk buffer per request would cost the small
// results of most transforms more than the PUT itself.
func (s *Store) putWhole(ctx context.Context, key string, data []byte) error {
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	sum, hashed := s.payloadHash(data)
	opts.DisableContentSha256 = hashed
	if _, err := (minio.Core{Client: s.c}).PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), "", sum, opts); err != nil {
		return s.explain(err, key)
	}
	return nil
}

// Presign returns a GET of object key, query-signed with the store's keys (SigV4) and valid for
// d, or "" when the store's URLs cannot be handed on (a caBundle of its own). It is computed
// here: the region is given, so minio-go asks the store nothing.
func (s *Store) Presign(ctx context.Context, key string, d time.Duration) (string, error) {
	if !s.presigns {
		return "", nil
	}
	// SigV4 counts validity in whole seconds, from 1 s to 7 days: rounded up, so that the URL
	// lasts as long as its object's time.
	d = min(max((d+time.Second-1).Truncate(time.Second), time.Second), 7*24*time.Hour)
	u, err := s.c.PresignedGetObject(ctx, s.bucket, key, d, nil)
	if err != nil {
		return "", s.explain(err, key)
	}
	return u.String(), nil
}

// Exists says whether object key exists.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	_, err := s.c.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return false, nil
	}
	return false, s.explain(err, key)
}

// ErrNotFound wraps a missing object (NoSuchKey).
var ErrNotFound = errors.New("no such object")

// ErrStore wraps an answer that makes the whole store unusable (keys refused, no bucket, no
// endpoint), as opposed to one object's failure: a run ends at it.
var ErrStore = errors.New("the object store cannot be used")

// explain turns a minio-go error about key (or the bucket, when empty) into one that names the
// store, the bucket and what to do, with the keys taken out.
func (s *Store) explain(err error, key string) error {
	what := fmt.Sprintf("ObjectStore %s (bucket %s at %s)", s.name, s.bucket, s.endpoint)
	if key != "" {
		what += fmt.Sprintf(", object %q", key)
	}
	var msg string
	kind := ErrStore
	switch code := minio.ToErrorResponse(err).Code; code {
	// XAdminUserNotFound is versitygw's answer to a key ID it does not know, where AWS answers
	// InvalidAccessKeyId.
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidClientTokenId", "ExpiredToken", "InvalidToken", "XAdminUserNotFound":
		msg = fmt.Sprintf("the store refused its keys (%s): check the keys the ObjectStore names in the Secret %s", code, v1alpha1.ObjectStoreSecretName)
	case "AccessDenied", "AllAccessDisabled":
		msg = fmt.Sprintf("the store denied access (%s): the keys are valid but may not do this; grant them access to the bucket", code)
	case "NoSuchBucket":
		msg = "the bucket does not exist: create it, or fix spec.bucket"
	case "NoSuchKey":
		msg, kind = "it does not exist", ErrNotFound
	case "":
		if errors.Is(err, egress.ErrRefused) || errors.Is(err, errListingTooLarge) {
			msg = err.Error()
		} else {
			msg = fmt.Sprintf("the endpoint cannot be reached: %v", err)
		}
	default:
		msg, kind = fmt.Sprintf("%s: %s", code, minio.ToErrorResponse(err).Message), nil
	}
	return &Error{Kind: kind, msg: s.redact(what + ": " + msg)}
}

// Error is what the store answered, explained: errors.Is tells its Kind (ErrStore, ErrNotFound,
// or nil for any other failure of one object).
type Error struct {
	Kind error
	msg  string
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.Kind }

// redact takes the store's keys out of msg: S3's answers do not carry them, and nothing this
// package reports ever will.
func (s *Store) redact(msg string) string {
	for _, k := range []string{s.keys.SecretAccessKey, s.keys.SessionToken} {
		if k != "" {
			msg = strings.ReplaceAll(msg, k, "<redacted>")
		}
	}
	return msg
}
