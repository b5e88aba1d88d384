package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/placement"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/egress"
	"github.com/mlkube/mlkube/internal/s3test"
	"github.com/mlkube/mlkube/internal/status"
	"github.com/mlkube/mlkube/sdk/transformer"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// storeNodes are the nodes of the tests' runs from a store: this env's and another.
var storeNodes = []string{testNode, "node-b"}

// storeEnv is an agent on node whose runs reach the test's S3 server on loopback, with secret
// as the namespace's Secret of store keys (nil: there is none).
func storeEnv(t *testing.T, node string, secret map[string][]byte, configure ...func(*Options)) *env {
	return newEnv(t, append([]func(*Options){func(o *Options) {
		o.Node = node
		o.Stores = egress.Policy{Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowFlag: egress.StoreFlag}
		o.StoreSecrets = func(_ context.Context, ns string) (map[string][]byte, error) {
			if ns != "default" {
				t.Errorf("store keys of namespace %s read; the run is of default", ns)
			}
			if secret == nil {
				return nil, status.NotFound(fmt.Errorf("secrets %q not found", etlv1alpha1.ObjectStoreSecretName))
			}
			return secret, nil
		}
	}}, configure...)...)
}

// storeKeys is the Secret of store keys holding the server's keys for the ObjectStore raw.
func storeKeys(srv *s3test.Server) map[string][]byte {
	return map[string][]byte{"raw.accessKeyID": []byte(srv.AccessKey), "raw.secretAccessKey": []byte(srv.SecretKey)}
}

// storeRun is a node run of the objects under images/ of the ObjectStore raw at endpoint, bucket
// bucket, into out/ through pipeline.
func storeRun(pipeline, endpoint, bucket string) wire.NodeRunSpec {
	return wire.NodeRunSpec{
		UID: testUID, Pipeline: pipeline, Workers: 4,
		Source:      etlv1alpha1.RunSource{Store: "raw", Prefix: "images"},
		Destination: etlv1alpha1.RunDestination{Prefix: "out"},
		SourceStore: &wire.RunStore{Name: "raw", Spec: etlv1alpha1.ObjectStoreSpec{
			Endpoint: endpoint, Region: "us-east-1", Bucket: bucket, Addressing: etlv1alpha1.AddressingPath,
			Credentials: &etlv1alpha1.ObjectStoreCredentials{
				SecretName: etlv1alpha1.ObjectStoreSecretName, AccessKeyIDKey: "raw.accessKeyID", SecretAccessKeyKey: "raw.secretAccessKey",
			},
		}},
		Nodes: storeNodes,
	}
}

func putStoreObject(t *testing.T, admin *minio.Client, bucket, key string, data []byte) {
	t.Helper()
	if _, err := admin.PutObject(context.Background(), bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		t.Fatalf("putting %s: %v", key, err)
	}
}

// TestNodeRunFromObjectStore: two nodes' agents each fetch from a real S3 server the objects of
// a run whose results the node tier places on them, transform them and write the results: every
// object is done once, on the node that holds its result, byte for byte, by every communicator.
func TestNodeRunFromObjectStore(t *testing.T) {
	srv := s3test.Start(t)
	admin := srv.Bucket(t, "raw")
	want := map[string]string{} // result → content
	for i := range 60 {
		key := fmt.Sprintf("images/%02d/%03d.jpg", i%7, i)
		data := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i*517)
		putStoreObject(t, admin, "raw", key, data)
		want["out/"+strings.TrimPrefix(key, "images/")] = string(data) + "|t:"
	}
	putStoreObject(t, admin, "raw", "other/x.jpg", []byte("not of the source"))
	for _, comm := range comms {
		t.Run(string(comm), func(t *testing.T) {
			var done int64
			seen := map[string]string{}
			for _, node := range storeNodes {
				e := storeEnv(t, node, storeKeys(srv))
				e.addTransform("t", comm, "", tag("t"))
				s := e.runToEnd("from-store", storeRun("t", srv.Endpoint, "raw"))
				if s.Phase != etlv1alpha1.RunSucceeded || s.FailedObjects != 0 || s.DoneObjects != s.PlannedObjects {
					t.Fatalf("node %s: %s %q, counts %+v", node, s.Phase, s.Message, s.RunCounts)
				}
				done += s.DoneObjects
				for result, content := range want {
					got, ok := e.readObject(result)
					if mine := placement.First("default", result, storeNodes) == node; ok != mine {
						t.Errorf("node %s holds %s: %v; the node tier places it on %s", node, result, ok, placement.First("default", result, storeNodes))
					}
					if ok {
						seen[result] = node
						if got != content {
							t.Errorf("node %s: %s is %d bytes %.20q; want %d bytes %.20q", node, result, len(got), got, len(content), content)
						}
					}
				}
				if e.exists("out/x.jpg") {
					t.Error("an object outside the source's prefix was transformed")
				}
			}
			if len(seen) != len(want) || done != int64(len(want)) {
				t.Errorf("%d of %d results written, %d objects done; want each once", len(seen), len(want), done)
			}
		})
	}
}

// TestNodeRunFromObjectStoreFailures: each way the store cannot be used ends the node's share
// with a reason that names the ObjectStore and says what to do, and never carries the secret
// key; one object that cannot be fetched, or whose key names no object of the node tier, fails
// alone with its reason.
func TestNodeRunFromObjectStoreFailures(t *testing.T) {
	srv := s3test.Start(t)
	admin := srv.Bucket(t, "raw")
	putStoreObject(t, admin, "raw", "images/ok.jpg", []byte("ok"))
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "http://" + closed.Addr().String()
	closed.Close()
	wrong := storeKeys(srv)
	wrong["raw.secretAccessKey"] = []byte("not-the-secret-key-0123456789")
	for _, tc := range []struct {
		name     string
		secret   map[string][]byte
		endpoint string
		bucket   string
		loopback bool // the store's network is allowed
		want     string
	}{
		{"wrong keys", wrong, srv.Endpoint, "raw", true, "the store refused its keys (SignatureDoesNotMatch): check the keys the ObjectStore names in the Secret mlkube-object-stores"},
		{"no Secret", nil, srv.Endpoint, "raw", true, "namespace default has no Secret mlkube-object-stores, which holds its stores' keys; create it"},
		{"no key in the Secret", map[string][]byte{"raw.accessKeyID": []byte(srv.AccessKey)}, srv.Endpoint, "raw", true, `the Secret mlkube-object-stores has no key "raw.secretAccessKey"`},
		{"no bucket", storeKeys(srv), srv.Endpoint, "missing", true, "ObjectStore raw (bucket missing at " + srv.Endpoint + "): the bucket does not exist: create it, or fix spec.bucket"},
		{"unreachable", storeKeys(srv), unreachable, "raw", true, "ObjectStore raw (bucket raw at " + unreachable + "): the endpoint cannot be reached"},
		{"egress refused", storeKeys(srv), srv.Endpoint, "raw", false, "--object-store-allowed-cidrs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := storeEnv(t, testNode, tc.secret)
			if !tc.loopback {
				e.agent.opts.Stores.Allowed = nil
			}
			e.addTransform("t", etlv1alpha1.CommHPush, "", tag("t"))
			s := e.runToEnd("from-store", storeRun("t", tc.endpoint, tc.bucket))
			if s.Phase != etlv1alpha1.RunFailed || !strings.Contains(s.Message, tc.want) {
				t.Errorf("%s %q; want Failed with %q", s.Phase, s.Message, tc.want)
			}
			if strings.Contains(s.Message, srv.SecretKey) || strings.Contains(s.Message, string(wrong["raw.secretAccessKey"])) {
				t.Errorf("the status carries a secret key: %q", s.Message)
			}
			if s.DoneObjects != 0 || e.exists("out/ok.jpg") {
				t.Errorf("objects done %d, out/ok.jpg written %v; want none", s.DoneObjects, e.exists("out/ok.jpg"))
			}
		})
	}

	t.Run("objects", func(t *testing.T) {
		putStoreObject(t, admin, "raw", "images/.cache/x", []byte("hidden"))
		e := storeEnv(t, testNode, storeKeys(srv))
		e.addTransform("t", etlv1alpha1.CommHPush, "", tag("t"))
		spec := storeRun("t", srv.Endpoint, "raw")
		spec.Source = etlv1alpha1.RunSource{Store: "raw", Objects: []string{"images/ok.jpg", "images/gone.jpg", "images/.cache/x"}}
		spec.Nodes = []string{testNode} // this node's share is all of them
		spec.ContinueOnError = true
		s := e.runToEnd("objects", spec)
		if got, ok := e.readObject("out/images/ok.jpg"); !ok || got != "ok|t:" {
			t.Errorf("out/images/ok.jpg = %q, %v", got, ok)
		}
		errs := map[string]string{}
		for _, oe := range s.Errors {
			errs[oe.Object] = fmt.Sprintf("%d %s", oe.StatusCode, oe.Message)
		}
		if got := errs["images/gone.jpg"]; !strings.HasPrefix(got, "404 ") || !strings.Contains(got, `object "images/gone.jpg": it does not exist`) {
			t.Errorf("the missing object failed with %q; want 404 naming it", got)
		}
		if got := errs["images/.cache/x"]; !strings.HasPrefix(got, "400 ") || !strings.Contains(got, "hidden") {
			t.Errorf("the object whose result would be hidden failed with %q; want 400 saying so", got)
		}
		if s.Phase != etlv1alpha1.RunFailed || s.DoneObjects != 1 || s.FailedObjects != 2 {
			t.Errorf("%s %q, counts %+v; want Failed with 1 done and 2 failed", s.Phase, s.Message, s.RunCounts)
		}
	})
}

// storeObjects reads every object under prefix of bucket: key → content.
func storeObjects(t *testing.T, admin *minio.Client, bucket, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for o := range admin.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		r, err := admin.GetObject(ctx, bucket, o.Key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := b.ReadFrom(r); err != nil {
			t.Fatal(err)
		}
		r.Close()
		out[o.Key] = b.String()
	}
	return out
}

// withDestinationStore makes spec write to bucket of the server under prefix, as the ObjectStore
// processed.
func withDestinationStore(spec wire.NodeRunSpec, endpoint, bucket, prefix string) wire.NodeRunSpec {
	spec.Destination = etlv1alpha1.RunDestination{Store: "processed", Prefix: prefix}
	s := storeRun("", endpoint, bucket).SourceStore
	spec.DestinationStore = &wire.RunStore{Name: "processed", Spec: s.Spec}
	return spec
}

// TestNodeRunIntoObjectStore: results go up to a bucket, from a bucket (the two nodes splitting
// its objects, a result larger than a multipart part among them) and from the node tier; an
// existing result is refused without overwrite, each node's error manifest goes up next to the
// results, and a resumed share skips what it put.
func TestNodeRunIntoObjectStore(t *testing.T) {
	srv := s3test.Start(t)
	admin := srv.Bucket(t, "raw")
	srv.Bucket(t, "processed")
	secret := storeKeys(srv)
	secret["processed.accessKeyID"], secret["processed.secretAccessKey"] = secret["raw.accessKeyID"], secret["raw.secretAccessKey"]
	want := map[string]string{}
	for i := range 40 {
		key := fmt.Sprintf("images/%03d.jpg", i)
		size := 1 + i*311
		if i == 7 {
			size = 16<<20 + 4321 // past objectstore.PartSize: a multipart upload
		}
		data := bytes.Repeat([]byte{byte('a' + i%26)}, size)
		putStoreObject(t, admin, "raw", key, data)
		want["out/"+strings.TrimPrefix(key, "images/")] = string(data) + "|t:"
	}

	t.Run("store to store", func(t *testing.T) {
		var done int64
		for _, node := range storeNodes {
			e := storeEnv(t, node, secret)
			e.addTransform("t", etlv1alpha1.CommWS, "", tag("t"))
			s := e.runToEnd("to-store", withDestinationStore(storeRun("t", srv.Endpoint, "raw"), srv.Endpoint, "processed", "out"))
			if s.Phase != etlv1alpha1.RunSucceeded || s.FailedObjects != 0 {
				t.Fatalf("node %s: %s %q, counts %+v", node, s.Phase, s.Message, s.RunCounts)
			}
			done += s.DoneObjects
			if e.exists("out") {
				t.Errorf("node %s wrote results into the node tier", node)
			}
		}
		got := storeObjects(t, admin, "processed", "out/")
		if len(got) != len(want) || done != int64(len(want)) {
			t.Errorf("%d results in the bucket, %d objects done; want %d each", len(got), done, len(want))
		}
		for key, content := range want {
			if got[key] != content {
				t.Errorf("%s: %d bytes %.20q; want %d bytes %.20q", key, len(got[key]), got[key], len(content), content)
			}
		}
	})

	t.Run("node tier to store, resumed, refusing what exists", func(t *testing.T) {
		e := storeEnv(t, testNode, secret)
		e.addTransform("t", etlv1alpha1.CommHPush, "", tag("t"))
		names := e.dataset(12)
		putStoreObject(t, admin, "processed", "up/"+strings.TrimPrefix(names[1], "raw/"), []byte("already there"))
		spec := withDestinationStore(prefixRun("t", 2), srv.Endpoint, "processed", "up")
		spec.ContinueOnError = true
		s := e.runToEnd("up", spec)
		if s.Phase != etlv1alpha1.RunFailed || s.DoneObjects != 11 || s.FailedObjects != 1 || len(s.Errors) != 1 ||
			s.Errors[0].StatusCode != 409 || !strings.Contains(s.Errors[0].Message, "exists; set overwrite to replace it") {
			t.Fatalf("%s %q, counts %+v, errors %+v; want 11 done and the existing result refused with 409", s.Phase, s.Message, s.RunCounts, s.Errors)
		}
		got := storeObjects(t, admin, "processed", "up/")
		for _, name := range names {
			key := "up/" + strings.TrimPrefix(name, "raw/")
			if wantContent := "object " + name + "|t:"; name != names[1] && got[key] != wantContent {
				t.Errorf("%s = %q, want %q", key, got[key], wantContent)
			}
		}
		if got["up/"+strings.TrimPrefix(names[1], "raw/")] != "already there" {
			t.Error("the existing result was replaced without overwrite")
		}
		manifest := "up/" + wire.StoreErrorManifest(testUID, testNode)
		if !strings.Contains(got[manifest], names[1]) || !strings.Contains(got[manifest], `"statusCode":409`) {
			t.Errorf("error manifest %s: %q; want the refused object with 409", manifest, got[manifest])
		}

		// Another attempt of the same run (its UID: the journal's key) skips what the journal
		// says went up, as an agent restarted half-way does.
		resumed := e.runToEnd("up-again", spec)
		if resumed.SkippedObjects != 11 {
			t.Errorf("resumed attempt: counts %+v; want the 11 objects put by the first one skipped", resumed.RunCounts)
		}
	})
}

// TestNodeRunCopies: a run without a pipeline copies each object as it is, from a store into the
// node tier and from the node tier into a store, byte for byte; args are refused, as no
// transformer would take them.
func TestNodeRunCopies(t *testing.T) {
	srv := s3test.Start(t)
	admin := srv.Bucket(t, "raw")
	srv.Bucket(t, "processed")
	secret := storeKeys(srv)
	secret["processed.accessKeyID"], secret["processed.secretAccessKey"] = secret["raw.accessKeyID"], secret["raw.secretAccessKey"]
	data := map[string]string{}
	for i := range 10 {
		key := fmt.Sprintf("images/%02d.bin", i)
		data[key] = strings.Repeat(fmt.Sprint(i), 1+i*1000)
		putStoreObject(t, admin, "raw", key, []byte(data[key]))
	}
	e := storeEnv(t, testNode, secret)
	in := storeRun("", srv.Endpoint, "raw")
	in.Nodes = []string{testNode}
	if s := e.runToEnd("copy-in", in); s.Phase != etlv1alpha1.RunSucceeded || s.DoneObjects != 10 {
		t.Fatalf("copy into the node tier: %s %q, counts %+v", s.Phase, s.Message, s.RunCounts)
	}
	for key, want := range data {
		if got, ok := e.readObject("out/" + strings.TrimPrefix(key, "images/")); !ok || got != want {
			t.Errorf("out/%s: %d bytes, %v; want the object's %d", strings.TrimPrefix(key, "images/"), len(got), ok, len(want))
		}
	}

	out := withDestinationStore(prefixRun("", 2), srv.Endpoint, "processed", "back")
	out.Source = etlv1alpha1.RunSource{Prefix: "out"}
	out.UID = "7e2a7c1e-0b1d-4c5e-9a8f-0123456789ab"
	if s := e.runToEnd("copy-out", out); s.Phase != etlv1alpha1.RunSucceeded || s.DoneObjects != 10 {
		t.Fatalf("copy into a store: %s %q, counts %+v", s.Phase, s.Message, s.RunCounts)
	}
	got := storeObjects(t, admin, "processed", "back/")
	for key, want := range data {
		if k := "back/" + strings.TrimPrefix(key, "images/"); got[k] != want {
			t.Errorf("%s: %d bytes; want the object's %d", k, len(got[k]), len(want))
		}
	}

	withArgs := in
	withArgs.UID, withArgs.Args = "8e2a7c1e-0b1d-4c5e-9a8f-0123456789ab", "x"
	if a, _ := e.putRun("copy-args", withArgs); a.status != http.StatusBadRequest || !strings.Contains(string(a.body), "a copy (no pipeline) has no transformer") {
		t.Errorf("a copy with args: %d %s; want 400 saying there is no transformer", a.status, a.body)
	}
}

// storeSpec is the ObjectStore raw of the tests: bucket at endpoint, keys in the namespace's
// Secret under raw.*.
func storeSpec(endpoint, bucket string) *etlv1alpha1.ObjectStoreSpec {
	return &storeRun("", endpoint, bucket).SourceStore.Spec
}

// TestListAnObjectStore: a caller RBAC lets get the ObjectStore pages through its objects as
// through the node tier's, grouped at "/" or not; a caller who may not is refused before the
// agent reads anything, and a store that cannot be used, or none, is a reason naming it.
func TestListAnObjectStore(t *testing.T) {
	srv := s3test.Start(t)
	admin := srv.Bucket(t, "raw")
	for _, key := range []string{"images/a.jpg", "images/b.jpg", "images/c/d.jpg", "top"} {
		putStoreObject(t, admin, "raw", key, []byte(key))
	}
	f := &rbac{allowed: map[string]map[string]bool{}}
	f.grant("erin", access.Request{Verb: "get", Namespace: "default", Resource: access.ResourceObjectStores, Name: "raw"})
	f.grant("mallory")
	stores := map[string]*etlv1alpha1.ObjectStoreSpec{"raw": storeSpec(srv.Endpoint, "raw"), "gone": storeSpec(srv.Endpoint, "nobucket")}
	read := 0
	e := storeEnv(t, testNode, storeKeys(srv))
	e.agent.opts.Access = f
	e.agent.opts.ObjectStores = func(_ context.Context, ns, name string) (*etlv1alpha1.ObjectStoreSpec, error) {
		read++
		if sp, ok := stores[name]; ok && ns == "default" {
			return sp, nil
		}
		return nil, status.NotFound(fmt.Errorf("namespace %s has no ObjectStore %s", ns, name))
	}
	list := func(store, query string) (int, wire.ObjectList, string) {
		a := e.do(http.MethodGet, e.url+wire.PathStores+"default/"+store+"/?"+query, nil)
		var l wire.ObjectList
		if a.status == http.StatusOK {
			if err := json.Unmarshal(a.body, &l); err != nil {
				t.Fatalf("the listing %s?%s: %v", store, query, err)
			}
		}
		return a.status, l, string(a.body)
	}
	names := func(l wire.ObjectList) string {
		var s []string
		for _, it := range l.Items {
			s = append(s, fmt.Sprintf("%s(%d)", it.Name, it.Size))
		}
		return fmt.Sprintf("%v %v next=%q", s, l.Prefixes, l.Next)
	}

	e.token = "erin"
	for query, want := range map[string]string{
		"prefix=images/&delimiter=/": `[images/a.jpg(12) images/b.jpg(12)] [images/c/] next=""`,
		"delimiter=/":                `[top(3)] [images/] next=""`,
		"prefix=images/":             `[images/a.jpg(12) images/b.jpg(12) images/c/d.jpg(14)] [] next=""`,
		"limit=2":                    `[images/a.jpg(12) images/b.jpg(12)] [] next="images/b.jpg"`,
		"limit=2&after=images/b.jpg": `[images/c/d.jpg(14) top(3)] [] next=""`,
		"prefix=none/&delimiter=/":   `[] [] next=""`,
	} {
		if code, l, body := list("raw", query); code != http.StatusOK || names(l) != want {
			t.Errorf("listing raw?%s: %d %s %s; want %s", query, code, names(l), body, want)
		}
	}
	for _, c := range []struct {
		token, store, query string
		code                int
		says                string
	}{
		{"mallory", "raw", "", http.StatusForbidden, "may not get objectstores.etl.mlkube.io raw"},
		{"erin", "other", "", http.StatusForbidden, "may not get objectstores.etl.mlkube.io other"},
		{"erin", "raw", "delimiter=,", http.StatusBadRequest, "listing groups names at"},
		{"erin", "Bad_Name", "", http.StatusBadRequest, "ObjectStore"},
	} {
		e.token = c.token
		before := read
		if code, _, body := list(c.store, c.query); code != c.code || !strings.Contains(body, c.says) || read != before {
			t.Errorf("%s listing %s?%s: %d %s (ObjectStores read %d); want %d saying %q, nothing read", c.token, c.store, c.query, code, body, read-before, c.code, c.says)
		}
	}
	f.grant("erin", access.Request{Verb: "get", Namespace: "default", Resource: access.ResourceObjectStores, Name: "gone"},
		access.Request{Verb: "get", Namespace: "default", Resource: access.ResourceObjectStores, Name: "other"})
	e.token = "erin"
	if code, _, body := list("gone", ""); code != http.StatusBadGateway || !strings.Contains(body, "ObjectStore gone (bucket nobucket") || !strings.Contains(body, "the bucket does not exist") {
		t.Errorf("listing a store whose bucket is gone: %d %s; want 502 naming the store and the bucket", code, body)
	}
	if code, _, body := list("other", ""); code != http.StatusNotFound || !strings.Contains(body, "no ObjectStore other") {
		t.Errorf("listing a store the namespace does not have: %d %s; want 404 naming it", code, body)
	}
	if code, _, body := list("raw", ""); code != http.StatusOK || strings.Contains(body, srv.SecretKey) {
		t.Errorf("listing raw: %d; the answer must not carry the keys", code)
	}
}

// srcRecorder serves a transformer's handler and keeps the src of every request it forwards.
type srcRecorder struct {
	mu   sync.Mutex
	srcs []string
	next http.Handler
}

func (r *srcRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.srcs = append(r.srcs, req.URL.Query().Get("src"))
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
}

func (r *srcRecorder) taken() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.srcs)
}

// addRecordedTransform makes an SDK transformer that fetches from the origins the file stores
// lists the Transform default/name, behind a srcRecorder.
func (e *env) addRecordedTransform(name string, arg etlv1alpha1.Argument, stores string, fn transformer.Func) *srcRecorder {
	s := transformertest.NewServer(e.t, fn, transformer.WithStoresFile(stores))
	rec := &srcRecorder{next: s.Handler}
	front := httptest.NewServer(rec)
	e.t.Cleanup(front.Close)
	e.addServer(name, etlv1alpha1.CommHPull, arg, &transformertest.Server{URL: front.URL, Token: s.Token})
	return rec
}

// TestNodeRunFromObjectStoreThroughPresignedURLs: an hpull Transform of argument url is handed
// a presigned GET of each object of the store and fetches it itself; results are byte-checked.
// Without argument url the srcs stay the agent's in-flight URLs; a transformer that does not list
// the store's origin fails every object with a reason that names the origin, and no reason
// carries the URL's signature or credential. An object listed past the agent's size limit is
// not handed on, as it would not be relayed.
func TestNodeRunFromObjectStoreThroughPresignedURLs(t *testing.T) {
	srv := s3test.Start(t)
	admin := srv.Bucket(t, "raw")
	want := map[string]string{}
	for i := range 24 {
		key := fmt.Sprintf("images/%03d.jpg", i)
		data := bytes.Repeat([]byte{byte('a' + i)}, 1+i*4099)
		putStoreObject(t, admin, "raw", key, data)
		want["out/"+strings.TrimPrefix(key, "images/")] = string(data) + "|t:"
	}
	origin, err := wire.StoreOrigin(srv.Endpoint, "raw", false)
	if err != nil {
		t.Fatal(err)
	}
	listed := filepath.Join(t.TempDir(), wire.TransformerStoresKey)
	if err := os.WriteFile(listed, []byte("http://elsewhere.example:80\n"+origin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	spec := storeRun("t", srv.Endpoint, "raw")
	spec.Nodes = []string{testNode} // this node's share is all of them
	for _, tc := range []struct {
		name     string
		arg      etlv1alpha1.Argument
		stores   string
		fromSign bool  // the srcs are presigned GETs of the store
		maxSize  int64 // the agent's --max-object-size, when not 0
	}{
		{"argument url", etlv1alpha1.ArgURL, listed, true, 0},
		{"argument bytes", "", listed, false, 0},
		{"origin not listed", etlv1alpha1.ArgURL, filepath.Join(t.TempDir(), "none"), true, 0},
		{"past the size limit", etlv1alpha1.ArgURL, listed, true, 1 + 3*4099 + int64(len("|t:"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := storeEnv(t, testNode, storeKeys(srv), func(o *Options) {
				if tc.maxSize != 0 {
					o.MaxObjectSize = tc.maxSize
				}
			})
			rec := e.addRecordedTransform("t", tc.arg, tc.stores, tag("t"))
			run := spec
			run.ContinueOnError = true
			s := e.runToEnd("presigned", run)
			srcs := rec.taken()
			if tc.maxSize != 0 {
				// Objects 0–3 and their results (3 bytes more) are within the limit; the 20 after them are not.
				if len(srcs) != 4 || s.DoneObjects != 4 || s.FailedObjects != int64(len(want)-4) {
					t.Fatalf("the transformer took %d requests, counts %+v; want 4 taken and done, %d failed", len(srcs), s.RunCounts, len(want)-4)
				}
				for _, oe := range s.Errors {
					if !strings.Contains(oe.Message, fmt.Sprintf("over the limit of %d bytes", tc.maxSize)) || !strings.Contains(oe.Message, "--max-object-size") {
						t.Errorf("%s failed with %q; want the limit and its flag named", oe.Object, oe.Message)
					}
				}
				return
			}
			if len(srcs) != len(want) {
				t.Fatalf("the transformer took %d requests; want one for each of %d objects", len(srcs), len(want))
			}
			for _, src := range srcs {
				u, err := url.Parse(src)
				if err != nil {
					t.Fatalf("src %q: %v", src, err)
				}
				presigned := wire.URLOrigin(u) == origin && u.Query().Get("X-Amz-Signature") != ""
				inflight := strings.Contains(u.Path, wire.PathInflight)
				if presigned != tc.fromSign || inflight == tc.fromSign {
					t.Errorf("src %q: presigned GET of the store %v, in-flight URL %v; want presigned %v", src, presigned, inflight, tc.fromSign)
				}
			}
			if tc.stores != listed {
				if s.DoneObjects != 0 || s.FailedObjects != int64(len(want)) || len(s.Errors) == 0 {
					t.Fatalf("%s, counts %+v, %d errors; want every object failed", s.Phase, s.RunCounts, len(s.Errors))
				}
				for _, oe := range s.Errors {
					if !strings.Contains(oe.Message, origin) || !strings.Contains(oe.Message, "not in") {
						t.Errorf("%s failed with %q; want the refusal of origin %s", oe.Object, oe.Message, origin)
					}
					unredacted := strings.ReplaceAll(oe.Message, "=REDACTED", "")
					for _, secret := range []string{"X-Amz-Signature=", "X-Amz-Credential=", srv.AccessKey} {
						if strings.Contains(unredacted, secret) {
							t.Errorf("%s failed with %q, which holds %q", oe.Object, oe.Message, secret)
						}
					}
				}
				return
			}
			if s.Phase != etlv1alpha1.RunSucceeded || s.DoneObjects != int64(len(want)) {
				t.Fatalf("%s %q, counts %+v", s.Phase, s.Message, s.RunCounts)
			}
			for result, content := range want {
				if got, ok := e.readObject(result); !ok || got != content {
					t.Errorf("%s is %d bytes %.20q (%v); want %d bytes %.20q", result, len(got), got, ok, len(content), content)
				}
			}
		})
	}
}

// TestTransformerMessagesLoseThePresignedSecrets: whatever a transformer answers, a presigned
// URL it quotes reaches the caller without its signature and credential.
func TestTransformerMessagesLoseThePresignedSecrets(t *testing.T) {
	quoted := "fetching http://s3:9000/raw/a?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA0123%2F20261128%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=0123abcd: 403"
	e := newEnv(t)
	e.addTransform("t", etlv1alpha1.CommHPush, "", fail(quoted))
	a := e.put("t", "a", wire.Query{}, []byte("x"))
	body := string(a.body)
	if a.status != http.StatusBadGateway || strings.Contains(body, "AKIA0123") || strings.Contains(body, "0123abcd") || !strings.Contains(body, "X-Amz-Algorithm=AWS4-HMAC-SHA256") {
		t.Errorf("%d %s; want 502 with the URL quoted, its signature and credential redacted", a.status, body)
	}
}

// TestPresignedMissingObjectIsNotFound: a listed name the store does not have fails with 404
// naming it when the transformer fetches it itself, as when the agent relays it ("objects" of
// TestNodeRunFromObjectStore), not with the transformer's failure as a bad gateway.
func TestPresignedMissingObjectIsNotFound(t *testing.T) {
	srv := s3test.Start(t)
	putStoreObject(t, srv.Bucket(t, "raw"), "raw", "images/ok.jpg", []byte("ok"))
	origin, err := wire.StoreOrigin(srv.Endpoint, "raw", false)
	if err != nil {
		t.Fatal(err)
	}
	listed := filepath.Join(t.TempDir(), wire.TransformerStoresKey)
	if err := os.WriteFile(listed, []byte(origin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := storeEnv(t, testNode, storeKeys(srv))
	rec := e.addRecordedTransform("t", etlv1alpha1.ArgURL, listed, tag("t"))
	spec := storeRun("t", srv.Endpoint, "raw")
	spec.Source = etlv1alpha1.RunSource{Store: "raw", Objects: []string{"images/ok.jpg", "images/gone.jpg"}}
	spec.Nodes = []string{testNode} // this node's share is all of them
	spec.ContinueOnError = true
	s := e.runToEnd("objects", spec)
	if got, ok := e.readObject("out/images/ok.jpg"); !ok || got != "ok|t:" || len(rec.taken()) != 2 {
		t.Fatalf("out/images/ok.jpg = %q, %v; want the transformer to have fetched both", got, ok)
	}
	if len(s.Errors) != 1 || s.Errors[0].Object != "images/gone.jpg" || s.Errors[0].StatusCode != http.StatusNotFound ||
		!strings.Contains(s.Errors[0].Message, `object "images/gone.jpg": it does not exist`) {
		t.Errorf("errors %+v; want images/gone.jpg failed with 404 naming it", s.Errors)
	}
}
