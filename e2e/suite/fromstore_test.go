package suite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/e2e/cluster"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// s3Admin is the e2e cluster's S3 server as its admin reaches it: through a port-forward, with
// the root keys, which only the cluster admin may read.
type s3Admin struct {
	c                    *minio.Client
	accessKey, secretKey string
}

func openS3(t *testing.T) *s3Admin {
	t.Helper()
	var keys corev1.Secret
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: cluster.S3Namespace, Name: cluster.S3KeysSecret}, &keys); err != nil {
		t.Fatalf("the S3 server's keys (the cluster is brought up with it: e2e/cluster/s3server.go): %v", err)
	}
	base := forwardTo(t, cluster.S3Namespace, client.MatchingLabels{"app": "s3"}, nil, cluster.S3Port)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	s := &s3Admin{accessKey: string(keys.Data["accessKeyID"]), secretKey: string(keys.Data["secretAccessKey"])}
	s.c, err = minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(s.accessKey, s.secretKey, ""), Region: cluster.S3Region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bucket makes a bucket named for the test's namespace, removed with its objects when the test
// ends.
func (s *s3Admin) bucket(t *testing.T, ns string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(ns))
	name := "e2e-" + hex.EncodeToString(sum[:8])
	ctx := context.Background()
	if err := s.c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: cluster.S3Region}); err != nil {
		t.Fatalf("making bucket %s: %v", name, err)
	}
	t.Cleanup(func() {
		for o := range s.c.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true}) {
			if o.Err == nil {
				_ = s.c.RemoveObject(ctx, name, o.Key, minio.RemoveObjectOptions{}) // best effort: the server's emptyDir goes with the cluster
			}
		}
		_ = s.c.RemoveBucket(ctx, name)
	})
	return name
}

// put writes files under prefix of bucket, 16 at once.
func (s *s3Admin) put(t *testing.T, bucket, prefix string, files map[string][]byte) {
	t.Helper()
	var g errgroup.Group
	g.SetLimit(16)
	for name, data := range files {
		g.Go(func() error {
			_, err := s.c.PutObject(context.Background(), bucket, prefix+name, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("putting %d objects into %s: %v", len(files), bucket, err)
	}
}

// get reads every object under prefix of bucket, by its name relative to prefix.
func (s *s3Admin) get(t *testing.T, bucket, prefix string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	out := map[string][]byte{}
	for o := range s.c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("listing %s: %v", bucket, o.Err)
		}
		r, err := s.c.GetObject(ctx, bucket, o.Key, minio.GetObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("reading %s of %s: %v", o.Key, bucket, err)
		}
		out[strings.TrimPrefix(o.Key, prefix)] = data
	}
	return out
}

// storeYAMLFor is the ObjectStore name of the e2e cluster's S3 server at endpoint, bucket bucket.
func storeYAMLFor(name, endpoint, bucket string) string {
	return fmt.Sprintf("apiVersion: etl.mlkube.io/v1alpha1\nkind: ObjectStore\nmetadata:\n  name: %s\nspec:\n  endpoint: %s\n  bucket: %s\n---\n", name, endpoint, bucket)
}

// runFromStoreYAML is a TransformRun of md5 over the objects under images/ of store into dst:
// "prefix: out" (the node tier) or "store: processed, prefix: out".
func runFromStoreYAML(name, store, dst string) string {
	return runThroughYAML(name, "md5", store, dst)
}

// runThroughYAML is runFromStoreYAML through the Transform transform.
func runThroughYAML(name, transform, store, dst string) string {
	return fmt.Sprintf(`apiVersion: etl.mlkube.io/v1alpha1
kind: TransformRun
metadata:
  name: %s
spec:
  transform: %s
  source: {store: %s, prefix: images}
  destination: {%s}
  workersPerNode: 8
---
`, name, transform, store, dst)
}

// TestTransformRunFromAnObjectStore: erin, with only edit in a namespace that enforces the
// restricted Pod Security Standard, keeps her store's keys in the Secret mlkube-object-stores,
// declares the cluster's S3 server's bucket as an ObjectStore and runs an md5 Transform over the
// 1,000 objects the test put in it. Every node's agent fetches its share straight from the
// store: the results land spread over the nodes, each where the node tier places it, and each is
// the md5 of its object. Keys the store refuses, a bucket that does not exist and an endpoint
// that cannot be reached each fail a run with a reason naming the ObjectStore and what to do;
// the secret key appears in no status, event or log of mlkube's.
func TestTransformRunFromAnObjectStore(t *testing.T) {
	admin := newShell(t)
	nodes := readyNodes(t)
	ns := onboard(t, "erin")
	erin := admin.as("erin")
	s3 := openS3(t)
	bucket := s3.bucket(t, ns)
	rng := rand.New(rand.NewPCG(27, 1000))
	images := map[string][]byte{}
	for i := range 1000 {
		images[fmt.Sprintf("%02d/%04d.bin", i%10, i)] = randomBytes(rng, 1+rng.IntN(8192))
	}
	s3.put(t, bucket, "images/", images)

	// Her keys: the server's, for the stores raw, nobucket and nowhere; wrong ones for wrongkeys.
	var env strings.Builder
	for _, store := range []string{"raw", "processed", "nobucket", "nowhere"} {
		fmt.Fprintf(&env, "%s.accessKeyID=%s\n%s.secretAccessKey=%s\n", store, s3.accessKey, store, s3.secretKey)
	}
	wrongSecret := "wrong-" + s3.secretKey[:20]
	fmt.Fprintf(&env, "wrongkeys.accessKeyID=%s\nwrongkeys.secretAccessKey=%s\n", s3.accessKey, wrongSecret)
	erin.file("keys.env", env.String())
	erin.do(ns, "create secret generic mlkube-object-stores --from-env-file=keys.env", "secret/mlkube-object-stores created")
	outBucket := s3.bucket(t, ns+"-out")
	erin.file("stores.yaml", storeYAMLFor("raw", cluster.S3Endpoint, bucket)+storeYAMLFor("processed", cluster.S3Endpoint, outBucket)+storeYAMLFor("wrongkeys", cluster.S3Endpoint, bucket)+
		storeYAMLFor("nobucket", cluster.S3Endpoint, bucket+"-missing")+
		storeYAMLFor("nowhere", strings.Replace(cluster.S3Endpoint, "s3.", "nowhere.", 1), bucket))
	erin.do(ns, "apply --filename=stores.yaml", "objectstore.etl.mlkube.io/raw created")

	// kubectl etl ls lists the bucket through an agent, whose keys never leave the cluster.
	erin.do(ns, "etl ls s3://raw/", "images/")
	var keys []string
	for name := range images {
		keys = append(keys, "images/"+name)
	}
	slices.Sort(keys)
	if listed := strings.Fields(erin.do(ns, "etl ls s3://raw/images/ --recursive -o name")); !slices.Equal(listed, keys) {
		t.Errorf("kubectl etl ls s3://raw/images/ --recursive listed %d keys (first %.3q); want the %d put", len(listed), listed, len(keys))
	}
	erin.refused([]string{"etl", "ls", "-n", ns, "s3://nobucket/"}, "", "ObjectStore nobucket cannot be listed", "the bucket does not exist")

	erin.file("pod.yaml", restrictedMD5Pod)
	erin.do(ns, "etl init spec -f pod.yaml --name md5", "transform.etl.mlkube.io/md5 created")
	erin.do(ns, "wait --for=jsonpath={.status.stage}=Running transforms.etl.mlkube.io/md5 --timeout=3m", "condition met")

	erin.file("run.yaml", runFromStoreYAML("from-store", "raw", "prefix: out"))
	erin.do(ns, "apply --filename=run.yaml", "transformrun.etl.mlkube.io/from-store created")
	run := &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Name: "from-store", Namespace: ns}}
	got := waitRun(t, run, v1alpha1.RunSucceeded)
	if got.Status.Totals.DoneObjects != 1000 || got.Status.Totals.FailedObjects != 0 || len(got.Status.Nodes) != len(nodes) {
		t.Errorf("the run from the store: totals %+v on %d nodes; want 1000 done on all %d", got.Status.Totals, len(got.Status.Nodes), len(nodes))
	}
	digests := map[string][]byte{}
	for name, data := range images {
		digests[name] = []byte(md5hex(data))
	}
	var list wire.ObjectList
	if raw := erin.do(ns, "etl ls out/ --recursive -o json"); json.Unmarshal([]byte(raw), &list) != nil {
		t.Fatalf("kubectl etl ls out/ --recursive -o json: %.500s", raw)
	}
	for i := range list.Items { // the run's error manifest is written only on errors
		if strings.HasPrefix(list.Items[i].Name, "out/mlkube-errors-") {
			t.Errorf("the run wrote an error manifest %s", list.Items[i].Name)
		}
	}
	wantSpread(t, list, "out/", digests, nodes)
	erin.do(ns, "etl cp etl:out/ ./out")
	sameFiles(t, "./out after kubectl etl cp etl:out/ ./out, against the md5 of each object of the bucket", erin.readTree("out"), digests)

	// From the bucket into another: the nodes split the objects and put each result up.
	erin.file("to-bucket.yaml", runFromStoreYAML("to-bucket", "raw", "store: processed, prefix: out"))
	erin.do(ns, "apply --filename=to-bucket.yaml", "transformrun.etl.mlkube.io/to-bucket created")
	erin.do(ns, "wait --for=condition=Complete transformruns.etl.mlkube.io/to-bucket --timeout=5m", "condition met") // README.md's step
	got = waitRun(t, &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Name: "to-bucket", Namespace: ns}}, v1alpha1.RunSucceeded)
	if got.Status.Totals.DoneObjects != 1000 || got.Status.Totals.FailedObjects != 0 {
		t.Errorf("the run into a bucket: totals %+v; want 1000 done", got.Status.Totals)
	}
	inBucket := s3.get(t, outBucket, "out/")
	sameFiles(t, "the bucket's objects under out/ after the run into it, against the md5 of each object", inBucket, digests)

	// Through an hpull Transform of argument url, each transformer reads the store itself.
	erin.do(ns, "etl init spec -f pod.yaml --name md5-pull --comm-type hpull --arg-type url", "transform.etl.mlkube.io/md5-pull created")
	erin.do(ns, "wait --for=jsonpath={.status.stage}=Running transforms.etl.mlkube.io/md5-pull --timeout=3m", "condition met")
	erin.file("pulled.yaml", runThroughYAML("pulled", "md5-pull", "raw", "store: processed, prefix: pulled"))
	erin.do(ns, "apply --filename=pulled.yaml", "transformrun.etl.mlkube.io/pulled created")
	got = waitRun(t, &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Name: "pulled", Namespace: ns}}, v1alpha1.RunSucceeded)
	if got.Status.Totals.DoneObjects != 1000 || got.Status.Totals.FailedObjects != 0 {
		t.Errorf("the run through md5-pull: totals %+v; want 1000 done", got.Status.Totals)
	}
	sameFiles(t, "the bucket's objects under pulled/ after the run through md5-pull, against the md5 of each object", s3.get(t, outBucket, "pulled/"), digests)

	// A named key the bucket lacks fails alone, 404 naming it, as it would if the agent relayed
	// it: the transformer's fetch of it is not read as the transformer failing.
	erin.file("missing.yaml", strings.Replace(runThroughYAML("pulled-missing", "md5-pull", "raw", "store: processed, prefix: pulled-missing"),
		"prefix: images}", "objects: [images/00/0000.bin, images/none.bin]}\n  continueOnError: true", 1))
	erin.do(ns, "apply --filename=missing.yaml", "transformrun.etl.mlkube.io/pulled-missing created")
	got = waitRun(t, &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Name: "pulled-missing", Namespace: ns}}, v1alpha1.RunFailed)
	if got.Status.Totals.DoneObjects != 1 || got.Status.Totals.FailedObjects != 1 {
		t.Errorf("the run of one key there and one not: totals %+v; want 1 done, 1 failed", got.Status.Totals)
	}
	var missing []v1alpha1.ObjectError
	if raw := erin.do(ns, "etl runs errors pulled-missing -o json"); json.Unmarshal([]byte(raw), &missing) != nil {
		t.Fatalf("kubectl etl runs errors pulled-missing -o json: %.500s", raw)
	}
	if len(missing) != 1 || missing[0].Object != "images/none.bin" || missing[0].StatusCode != http.StatusNotFound ||
		!strings.Contains(missing[0].Message, `object "images/none.bin": it does not exist in the store`) {
		t.Errorf("kubectl etl runs errors pulled-missing: %+v; want images/none.bin alone, 404, saying it does not exist in the store", missing)
	}

	// Results past a MiB go up from the agent's bounded buffers: one just past it in one PUT,
	// larger ones as multipart uploads of 16 MiB parts. An echo Transform gives each object back.
	bigs := map[string][]byte{"just-past.bin": randomBytes(rng, 1<<20+1), "two-parts.bin": randomBytes(rng, 16<<20+3), "three-parts.bin": randomBytes(rng, 40<<20)}
	s3.put(t, bucket, "big/", bigs)
	erin.file("echo.yaml", strings.NewReplacer("transformer-md5", "transformer-echo").Replace(restrictedMD5Pod))
	erin.do(ns, "etl init spec -f echo.yaml --name echo", "transform.etl.mlkube.io/echo created")
	erin.do(ns, "wait --for=jsonpath={.status.stage}=Running transforms.etl.mlkube.io/echo --timeout=3m", "condition met")
	erin.file("big.yaml", strings.Replace(runThroughYAML("big", "echo", "raw", "store: processed, prefix: big-out"), "prefix: images}", "prefix: big}", 1))
	erin.do(ns, "apply --filename=big.yaml", "transformrun.etl.mlkube.io/big created")
	got = waitRun(t, &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Name: "big", Namespace: ns}}, v1alpha1.RunSucceeded)
	if got.Status.Totals.DoneObjects != int64(len(bigs)) || got.Status.Totals.FailedObjects != 0 {
		t.Errorf("the run of large objects through echo: totals %+v; want %d done", got.Status.Totals, len(bigs))
	}
	sameFiles(t, "the bucket's objects under big-out/ after the run of large objects through echo, against the objects", s3.get(t, outBucket, "big-out/"), bigs)

	// kubectl etl cp copies between the bucket and the namespace's objects, either way, through
	// copy runs the agents carry out.
	erin.do(ns, "etl cp s3://raw/images etl:copied/", "created", "Succeeded 1000/1000 objects")
	var copied wire.ObjectList
	if raw := erin.do(ns, "etl ls copied/ --recursive -o json"); json.Unmarshal([]byte(raw), &copied) != nil {
		t.Fatalf("kubectl etl ls copied/ --recursive -o json: %.500s", raw)
	}
	wantSpread(t, copied, "copied/", images, nodes)
	erin.do(ns, "etl cp etl:copied/ s3://processed/back", "created", "Succeeded 1000/1000 objects")
	sameFiles(t, "the bucket's objects under back/ after kubectl etl cp etl:copied/ s3://processed/back", s3.get(t, outBucket, "back/"), images)

	// Each store that cannot be used fails its run, saying why.
	for store, want := range map[string]string{
		"wrongkeys": "ObjectStore wrongkeys (bucket " + bucket + " at " + cluster.S3Endpoint + "): the store refused its keys (SignatureDoesNotMatch): check the keys the ObjectStore names in the Secret mlkube-object-stores",
		"nobucket":  "ObjectStore nobucket (bucket " + bucket + "-missing at " + cluster.S3Endpoint + "): the bucket does not exist: create it, or fix spec.bucket",
		"nowhere":   "ObjectStore nowhere (bucket " + bucket + " at " + strings.Replace(cluster.S3Endpoint, "s3.", "nowhere.", 1) + "): the endpoint cannot be reached",
	} {
		erin.file(store+".yaml", runFromStoreYAML("from-"+store, store, "prefix: out-"+store))
		erin.do(ns, "apply --filename="+store+".yaml", "transformrun.etl.mlkube.io/from-"+store+" created")
		r := waitRun(t, &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Name: "from-" + store, Namespace: ns}}, v1alpha1.RunFailed)
		if msgs := runMessages(r); !strings.Contains(msgs, want) {
			t.Errorf("the run from %s failed with %s; want %q", store, msgs, want)
		}
	}

	// The secret keys are nowhere mlkube writes: runs' status, the namespace's events, the
	// manager's and the agents' logs.
	secrets := []string{s3.secretKey, wrongSecret}
	var where []string
	where = append(where, "the runs' status:\n"+erin.do(ns, "get transformruns -o json"))
	where = append(where, "the namespace's events:\n"+erin.do(ns, "get events -o json"))
	for _, sel := range []struct{ ns, component string }{{systemNamespace, "manager"}, {dataPathNamespace, "node-agent"}} {
		pods, err := clientset.CoreV1().Pods(sel.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=" + sel.component})
		if err != nil || len(pods.Items) == 0 {
			t.Fatalf("pods of %s in %s: %d, %v", sel.component, sel.ns, len(pods.Items), err)
		}
		for _, p := range pods.Items {
			logs, err := clientset.CoreV1().Pods(sel.ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: sel.component}).DoRaw(context.Background())
			if err != nil {
				t.Fatalf("logs of %s/%s: %v", sel.ns, p.Name, err)
			}
			where = append(where, "the logs of "+sel.ns+"/"+p.Name+":\n"+string(logs))
		}
	}
	for _, text := range where {
		for _, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("a secret key is in %s", strings.SplitN(text, "\n", 2)[0])
			}
		}
	}
}

// TestTransformRunFromAStoreResumesAfterItsAgentIsDeleted: a run from a bucket whose agent on one
// node is deleted half-way resumes on that node from its journal: what the lost agent wrote is
// skipped, the rest done, and every object of the bucket ends transformed once, in the node tier.
func TestTransformRunFromAStoreResumesAfterItsAgentIsDeleted(t *testing.T) {
	const count = 400
	c := newRunCluster(t, "0.1") // about 200 objects a node over 2 workers: 10 s, so the status shows it a quarter done before it ends
	s3 := openS3(t)
	bucket := s3.bucket(t, c.ns)
	files := map[string][]byte{}
	digests := map[string]string{}
	for i := range count {
		name := fmt.Sprintf("%04d", i)
		files[name] = []byte(fmt.Sprintf("object %d of the bucket", i))
		digests[name] = md5hex(files[name])
	}
	s3.put(t, bucket, "images/", files)
	k8s.MustCreate(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ObjectStoreSecretName, Namespace: c.ns},
		StringData: map[string]string{"raw.accessKeyID": s3.accessKey, "raw.secretAccessKey": s3.secretKey}})
	k8s.MustCreate(t, &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Name: "raw", Namespace: c.ns},
		Spec: v1alpha1.ObjectStoreSpec{Endpoint: cluster.S3Endpoint, Bucket: bucket}})
	run := c.run("resume", func(s *v1alpha1.TransformRunSpec) {
		s.Source = v1alpha1.RunSource{Store: "raw", Prefix: "images"}
		s.WorkersPerNode = ptr.To[int32](2)
	})
	k8s.MustCreate(t, run)
	node := c.nodes[0]
	kubetest.WaitFor(t, k8s, "node "+node+" a quarter done", run, func(r *v1alpha1.TransformRun) (bool, error) {
		for _, n := range r.Status.Nodes {
			if n.Node == node && n.PlannedObjects > 0 && n.DoneObjects >= n.PlannedObjects/4 {
				if n.DoneObjects >= n.PlannedObjects {
					return false, kubetest.Stop(fmt.Errorf("node %s finished before its agent could be deleted", node))
				}
				return true, nil
			}
		}
		return false, nil
	})
	deleteAgentOn(t, node)
	run = waitRun(t, run, v1alpha1.RunSucceeded)
	got := map[string]string{}
	for _, n := range c.nodes {
		for name, content := range c.contents(t, n, "out") {
			if _, twice := got[name]; twice {
				t.Errorf("%s is in the node tier of two nodes", name)
			}
			got[name] = content
		}
	}
	if diff := cmp.Diff(digests, got); diff != "" {
		t.Errorf("the results in the node tier (-want +got):\n%s", diff)
	}
	for _, n := range run.Status.Nodes {
		if n.Node == node && (n.SkippedObjects == 0 || n.DoneObjects+n.SkippedObjects != n.PlannedObjects) {
			t.Errorf("node %s after its agent's loss: %d done, %d skipped of %d; want the journal's objects skipped and the rest done",
				node, n.DoneObjects, n.SkippedObjects, n.PlannedObjects)
		}
	}
}

// TestStoreURLsOnlyFromTheNamespacesStores: the token Secret of an hpull Transform of argument
// url lists the origins of its namespace's ObjectStores (a store with a caBundle of its own is
// read through the agent, so not listed), and whoever holds the token, a pod of another
// namespace here, cannot make the transformer fetch a src anywhere else: refused with 400, and
// the listener it names sees no request. Not of the provider scope: the local cluster enforces
// no NetworkPolicy, so only the transformer's own check stands in the way.
func TestStoreURLsOnlyFromTheNamespacesStores(t *testing.T) {
	ns := namespace(t)
	node := readyNodes(t)[0]
	stores := map[string]string{"raw": "http://S3.Example:9000", "tls": "https://tls.example"}
	for name, endpoint := range stores {
		st := &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1alpha1.ObjectStoreSpec{Endpoint: endpoint, Bucket: "data-" + name}}
		if name == "tls" {
			st.Spec.CABundle = clusterCA(t) // any CA: the store is never reached
		}
		k8s.MustCreate(t, st)
	}
	tr := builders.Transform("md5-pull").Namespace(ns).Runtime("mlkube/transformer-md5:dev").Spec(func(s *v1alpha1.TransformSpec) {
		s.Communication, s.Argument = v1alpha1.CommHPull, v1alpha1.ArgURL
		s.NodeSelector = map[string]string{corev1.LabelHostname: node}
	}).Obj()
	k8s.MustCreate(t, tr)
	running := k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	if len(running.Status.Nodes) != 1 {
		t.Fatalf("status.nodes %+v; want the transformer on %s", running.Status.Nodes, node)
	}
	n := running.Status.Nodes[0]
	var secret corev1.Secret
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: tr.Name + "-mlkube-token-" + n.TokenKey}, &secret); err != nil {
		t.Fatal(err)
	}
	if got, want := string(secret.Data[wire.TransformerStoresKey]), "http://s3.example:9000\n"; got != want {
		t.Errorf("the token Secret lists the stores %q; want %q (the store with a caBundle is read through the agent)", got, want)
	}

	attacker := startPod(t, attackerPod(bareNamespace(t), node, attackerPort))
	base := "http://" + net.JoinHostPort(n.IP, strconv.Itoa(int(n.Port)))
	canary := "http://" + net.JoinHostPort(attacker.Status.PodIP, strconv.Itoa(attackerPort)) + "/canary/object?X-Amz-Signature=forged"
	token := wire.HeaderTransformerToken + ": " + string(secret.Data[wire.TransformerTokenKey])
	if code, body := hostileFetch(attacker, "GET", wire.ObjectURL(base, "x", wire.Query{Src: canary}), token); code != 400 || !strings.Contains(body, "is not in") {
		t.Errorf("a src on the attacker's listener, with the token: %d %q; want 400 saying its origin is not listed", code, body)
	}
	if code, body := hostileFetch(attacker, "GET", wire.ObjectURL(base, "x", wire.Query{Src: canary}), wire.HeaderTransformerToken+": k1.madeup"); code != 401 {
		t.Errorf("the same src with a made-up token: %d %q; want 401", code, body)
	}
	if code, hits := proxyResult(proxyTo(attacker).Suffix("canary-count").Do(context.Background())); code != 200 || hits != "0" {
		t.Errorf("the attacker's listener saw %s requests (%d): the transformer fetched the forged src", hits, code)
	}
}

// clusterCA is the PEM of the CA the test's kubeconfig trusts.
func clusterCA(t *testing.T) string {
	t.Helper()
	if len(cfg.CAData) > 0 {
		return string(cfg.CAData)
	}
	data, err := os.ReadFile(cfg.CAFile)
	if err != nil || len(data) == 0 {
		t.Fatalf("the kubeconfig's CA (%q): %v", cfg.CAFile, err)
	}
	return string(data)
}
