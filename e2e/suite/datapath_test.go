package suite

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/builders"
)

const (
	// agentURL is the node agents' Service: internalTrafficPolicy Local sends each client to the
	// agent of its own node.
	agentURL = "http://node-agent.mlkube-datapath.svc"
	// hostDataRoot holds one data root per node (the agents' --data-root is <this>/<node>).
	hostDataRoot = "/var/lib/mlkube/data"
	clientImage  = "mlkube/e2e-testserver:dev"
)

// nodeMD5 answers "<node>:<md5>": the answer names the node whose transformer made it.
const nodeMD5Source = `import hashlib, os

def transform(data):
    return (os.environ["MLKUBE_NODE"] + ":" + hashlib.md5(data).hexdigest()).encode()
`

var ioNodeMD5 = []string{"python3", "-c",
	"import sys, os, hashlib; sys.stdout.write(os.environ['MLKUBE_NODE'] + ':' + hashlib.md5(sys.stdin.buffer.read()).hexdigest())"}

// writeObject puts an object into one node's data root. The local cluster's nodes share this
// machine's filesystem, each with its own root; other providers would need a pod to write it.
func writeObject(t *testing.T, node, name string, data []byte) {
	t.Helper()
	if p := os.Getenv("MLKUBE_CLUSTER_PROVIDER"); p != "" && p != "local" {
		t.Skipf("writing into node %s's data root needs the local provider, not %s", node, p)
	}
	path := filepath.Join(hostDataRoot, node, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// The kubelet creates the node's directory (the agent's subPath) 0750 root; the agent runs as
	// an unprivileged user.
	if err := os.Chmod(filepath.Join(hostDataRoot, node), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Remove(path) })
}

// clientOn starts a client pod on node and returns its name once it is ready.
func clientOn(t *testing.T, ns, node string) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "client-" + node, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{
				Name: "client", Image: clientImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}, PeriodSeconds: 1},
			}},
		},
	}
	create(t, pod)
	eventually(t, "client pod on "+node, func(ctx context.Context) (bool, error) {
		var p corev1.Pod
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	return pod.Name
}

// fetchFrom makes the client pod GET u and returns the status and body it got; a failure to
// reach the pod comes back as status 0 and the error (it runs in worker goroutines, which must
// not stop the test themselves).
func fetchFrom(t *testing.T, ns, pod, u string) (int, string) {
	t.Helper()
	body, err := clientset.CoreV1().Pods(ns).ProxyGet("http", pod, "8080", "/fetch", map[string]string{"url": u}).DoRaw(context.Background())
	if err == nil {
		return 200, string(body)
	}
	if status, ok := err.(apierrors.APIStatus); ok {
		return int(status.Status().Code), string(body) + status.Status().Message
	}
	return 0, fmt.Sprintf("fetching %s from %s: %v", u, pod, err)
}

func transformURL(ns, name, object string) string {
	return fmt.Sprintf("%s/v1/transform/%s/%s/%s", agentURL, ns, url.PathEscape(name), object)
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// nodeMD5Transform is a Transform answering "<node>:<md5>" over comm.
func nodeMD5Transform(ns string, comm v1alpha1.Communication) *v1alpha1.Transform {
	if comm == v1alpha1.CommIO {
		return builders.Transform("nodemd5-io").Namespace(ns).Runtime(pythonImage, ioNodeMD5...).Comm(comm).Obj()
	}
	return builders.Transform("nodemd5-"+string(comm)).Namespace(ns).Code("python3.11", nodeMD5Source).Comm(comm).Obj()
}

func TestDataPathTransformsANodeLocalObjectOnItsNode(t *testing.T) {
	nodes := readyNodes(t)
	a, b := nodes[0], nodes[1]
	ns := namespace(t)
	clientA, clientB := clientOn(t, ns, a), clientOn(t, ns, b)
	object := fmt.Sprintf("e2e/%s/only-on-a.bin", ns)
	data := []byte("bytes that live on node " + a + " only")
	writeObject(t, a, object, data)
	for _, comm := range v1alpha1.Communications {
		t.Run(string(comm), func(t *testing.T) {
			tr := nodeMD5Transform(ns, comm)
			create(t, tr)
			waitForStage(t, tr, v1alpha1.StageRunning)
			code, body := fetchFrom(t, ns, clientA, transformURL(ns, tr.Name, object))
			if want := a + ":" + md5hex(data); code != 200 || body != want {
				t.Errorf("node %s's client got %d %q; want 200 %q (node %s's agent and transformer)", a, code, body, want, a)
			}
			// Node b's agent reads node b's root, where the object is not: locality is real.
			if code, body := fetchFrom(t, ns, clientB, transformURL(ns, tr.Name, object)); code != 404 {
				t.Errorf("node %s's client got %d %q; want 404, the object is not in its node's root", b, code, body)
			}
		})
	}
}

// md5OnANode runs the md5 transformer over comm and a client pod on one node, and returns them
// once the Transform is Running.
func md5OnANode(t *testing.T, comm v1alpha1.Communication) (node, ns, clientPod string, tr *v1alpha1.Transform) {
	t.Helper()
	node = readyNodes(t)[0]
	ns = namespace(t)
	clientPod = clientOn(t, ns, node)
	tr = builders.Transform("md5").Namespace(ns).Runtime("mlkube/transformer-md5:dev").Comm(comm).Obj()
	create(t, tr)
	waitForStage(t, tr, v1alpha1.StageRunning)
	return node, ns, clientPod, tr
}

func TestDataPathMD5OfAThousandObjects(t *testing.T) {
	node, ns, clientPod, tr := md5OnANode(t, v1alpha1.CommWS)
	want := map[string]string{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		data := make([]byte, 1+rng.IntN(8192))
		for j := range data {
			data[j] = byte(rng.UintN(256))
		}
		name := fmt.Sprintf("e2e/%s/obj-%04d", ns, i)
		writeObject(t, node, name, data)
		want[name] = md5hex(data)
	}
	// Eight fetches at a time: each goes through the API server's pod proxy.
	names := slices.Sorted(maps.Keys(want))
	var mismatches atomic.Int32
	var wg sync.WaitGroup
	work := make(chan string)
	for range 8 {
		wg.Go(func() {
			for name := range work {
				code, body := fetchFrom(t, ns, clientPod, transformURL(ns, tr.Name, name))
				if code != 200 || strings.TrimSpace(body) != want[name] {
					if mismatches.Add(1) <= 5 {
						t.Errorf("%s: got %d %q; want md5 %s", name, code, body, want[name])
					}
				}
			}
		})
	}
	for _, name := range names {
		work <- name
	}
	close(work)
	wg.Wait()
	if mismatches := mismatches.Load(); mismatches > 0 {
		t.Fatalf("%d of 1000 objects did not match their local md5", mismatches)
	}
	// The agents' counters reach the Transform's status through the manager's collector.
	eventually(t, "1000 objects counted in the Transform's status", func(ctx context.Context) (bool, error) {
		var got v1alpha1.Transform
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(tr), &got); err != nil {
			return false, err
		}
		var onNode int64
		for _, n := range got.Status.Nodes {
			if n.Node == node {
				onNode = n.Objects
			}
		}
		return got.Status.Totals.Objects >= 1000 && onNode >= 1000 && got.Status.Totals.BytesIn > 0, nil
	})
}

func TestDataPathPipeline(t *testing.T) {
	node := readyNodes(t)[0]
	ns := namespace(t)
	clientPod := clientOn(t, ns, node)
	upper := builders.Transform("upper").Namespace(ns).Code("python3.11", "def transform(data):\n    return data.upper()\n").Obj()
	last := nodeMD5Transform(ns, v1alpha1.CommWS)
	create(t, upper)
	create(t, last)
	waitForStage(t, upper, v1alpha1.StageRunning)
	waitForStage(t, last, v1alpha1.StageRunning)
	object := fmt.Sprintf("e2e/%s/pipeline.txt", ns)
	writeObject(t, node, object, []byte("make me loud"))
	code, body := fetchFrom(t, ns, clientPod, transformURL(ns, "upper>>"+last.Name, object))
	if want := node + ":" + md5hex([]byte("MAKE ME LOUD")); code != 200 || body != want {
		t.Errorf("pipeline upper>>%s got %d %q; want 200 %q", last.Name, code, body, want)
	}
}

// postFrom makes the client pod POST body to u and returns the status and body it got.
func postFrom(t *testing.T, ns, pod, u string, body []byte) (int, string) {
	t.Helper()
	res := clientset.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod+":8080").
		SubResource("proxy").Suffix("fetch").Param("url", u).Body(body).Do(context.Background())
	var code int
	res.StatusCode(&code)
	raw, err := res.Raw()
	if err != nil && code == 0 {
		return 0, fmt.Sprintf("posting to %s from %s: %v", u, pod, err)
	}
	return code, string(raw)
}

// TestDataPathOfflineRun transforms a dataset in a node's data root into another directory of it:
// the node's agent runs it, and the results appear on the node under their final names only.
func TestDataPathOfflineRun(t *testing.T) {
	node, ns, clientPod, tr := md5OnANode(t, v1alpha1.CommHPush)
	src, dst := fmt.Sprintf("e2e/%s/offline-src", ns), fmt.Sprintf("e2e/%s/offline-dst", ns)
	want := map[string]string{}
	for i := range 50 {
		data := fmt.Appendf(nil, "offline object %d of %s", i, ns)
		name := fmt.Sprintf("%s/d%d/o%02d", src, i%3, i)
		writeObject(t, node, name, data)
		want[dst+strings.TrimPrefix(name, src)] = md5hex(data)
	}
	// The agent runs unprivileged: the destination is prepared writable for it, as an operator
	// prepares a node's data directory.
	hostDst := filepath.Join(hostDataRoot, node, dst)
	if err := os.MkdirAll(hostDst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(hostDst, 65532, 65532); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(hostDst) })

	code, body := postFrom(t, ns, clientPod, agentURL+"/v1/offline/"+ns+"/"+tr.Name,
		fmt.Appendf(nil, `{"src": %q, "dst": %q, "workers": 4}`, src, dst))
	var started struct{ ID, Node string }
	if err := json.Unmarshal([]byte(body), &started); code != 202 || err != nil || started.Node != node {
		t.Fatalf("starting the run from node %s: %d %q; want 202 from that node's agent", node, code, body)
	}
	var last string
	eventually(t, "the offline run to succeed", func(context.Context) (bool, error) {
		code, body := fetchFrom(t, ns, clientPod, agentURL+"/v1/offline/"+started.ID)
		last = body
		return code == 200 && strings.Contains(body, `"state":"Succeeded"`), nil
	})
	if !strings.Contains(last, `"total":50`) || !strings.Contains(last, `"objects":50`) {
		t.Errorf("final status %s; want 50 objects, all transformed", last)
	}
	for name, sum := range want {
		got, err := os.ReadFile(filepath.Join(hostDataRoot, node, name))
		if err != nil || strings.TrimSpace(string(got)) != sum {
			t.Errorf("%s on node %s: %q (%v); want md5 %s", name, node, got, err, sum)
		}
	}
	filepath.WalkDir(hostDst, func(p string, _ fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}
