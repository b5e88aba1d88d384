package suite

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/e2e/internal/fixture"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// agentURL is the node agents' Service: internalTrafficPolicy Local sends each client to the agent
// of its own node.
const agentURL = fixture.AgentURL

// nodeMD5 answers "<node>:<md5>": the answer names the node whose transformer made it.
const nodeMD5Source = `import hashlib, os

def transform(data):
    return (os.environ["MLKUBE_NODE"] + ":" + hashlib.md5(data).hexdigest()).encode()
`

var ioNodeMD5 = []string{"python3", "-c",
	"import sys, os, hashlib; sys.stdout.write(os.environ['MLKUBE_NODE'] + ':' + hashlib.md5(sys.stdin.buffer.read()).hexdigest())"}

// fetchFrom makes the client pod GET u and returns the status and body it got (status 0 and the
// error when the pod cannot be reached: it runs in worker goroutines, which must not stop the test
// themselves).
func fetchFrom(t *testing.T, ns, pod, u string) (int, string) {
	t.Helper()
	return proxyResult(clientset.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").Name(pod+":8080").
		SubResource("proxy").Suffix("fetch").Param("url", u).Do(context.Background()))
}

func transformURL(ns, name, object string) string {
	return fmt.Sprintf("%s%s%s/%s/%s", agentURL, wire.PathTransform, ns, url.PathEscape(name), object)
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
	object := "only-on-a.bin"
	data := []byte("bytes that live on node " + a + " only")
	putObjects(t, ns, a, map[string][]byte{object: data})
	for _, comm := range v1alpha1.Communications {
		t.Run(string(comm), func(t *testing.T) {
			tr := nodeMD5Transform(ns, comm)
			k8s.MustCreate(t, tr)
			k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
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
	k8s.MustCreate(t, tr)
	k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	return node, ns, clientPod, tr
}

func TestDataPathMD5OfAThousandObjects(t *testing.T) {
	node, ns, clientPod, tr := md5OnANode(t, v1alpha1.CommWS)
	want, objects := map[string]string{}, map[string][]byte{}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		data := make([]byte, 1+rng.IntN(8192))
		for j := range data {
			data[j] = byte(rng.UintN(256))
		}
		name := fmt.Sprintf("obj-%04d", i)
		objects[name] = data
		want[name] = md5hex(data)
	}
	putObjects(t, ns, node, objects)
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
	kubetest.WaitFor(t, k8s, "1000 objects counted in the Transform's status", tr, func(got *v1alpha1.Transform) (bool, error) {
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
	k8s.MustCreate(t, upper)
	k8s.MustCreate(t, last)
	k8s.WaitForStage(t, upper, v1alpha1.StageRunning)
	k8s.WaitForStage(t, last, v1alpha1.StageRunning)
	object := "pipeline.txt"
	putObjects(t, ns, node, map[string][]byte{object: []byte("make me loud")})
	code, body := fetchFrom(t, ns, clientPod, transformURL(ns, "upper>>"+last.Name, object))
	if want := node + ":" + md5hex([]byte("MAKE ME LOUD")); code != 200 || body != want {
		t.Errorf("pipeline upper>>%s got %d %q; want 200 %q", last.Name, code, body, want)
	}
}

// ioFramedMD5 is a persistent io command (spec.ioMode: Persistent) in Python: it reads object
// after object in the framing of docs/transforms.md and answers "<objects this process has
// served>:<md5>".
var ioFramedMD5 = []string{"python3", "-c", `import sys, struct, hashlib
i, o = sys.stdin.buffer, sys.stdout.buffer
def u32():
    b = i.read(4)
    return struct.unpack(">I", b)[0] if len(b) == 4 else None
served = 0
while (n := u32()) is not None:
    name, args = i.read(n), i.read(u32())
    h = hashlib.md5()
    while (n := u32()):
        h.update(i.read(n))
    served += 1
    out = f"{served}:{h.hexdigest()}".encode()
    o.write(struct.pack(">I", len(out)) + out + struct.pack(">I", 0))
    o.flush()
`}

// TestDataPathPersistentIOCommandServesObjectAfterObject: an editor's io Transform of mode
// Persistent, in a namespace that enforces the restricted Pod Security Standard, runs with no
// warning and answers every object with its md5, and its command is not started per object:
// objects sent one after another reach a process that has served one before, however many the
// shim keeps.
func TestDataPathPersistentIOCommandServesObjectAfterObject(t *testing.T) {
	node := readyNodes(t)[0]
	ns := onboard(t, "paula")
	paula, warned := impersonateWarned(t, "paula")
	tr := builders.Transform("md5-persistent").Namespace(ns).Runtime(pythonImage, ioFramedMD5...).Comm(v1alpha1.CommIO).
		Spec(func(s *v1alpha1.TransformSpec) { s.IOMode = v1alpha1.IOPersistent }).Obj()
	paula.MustCreate(t, tr)
	k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	if w := warned.all(); len(w) > 0 {
		t.Errorf("the API server warned paula: %q", w)
	}
	const objects = 200
	data := map[string][]byte{}
	for i := range objects {
		data[fmt.Sprintf("o-%03d", i)] = []byte(strings.Repeat(fmt.Sprintf("object %d;", i), 1+i*37))
	}
	putObjects(t, ns, node, data)
	agent, token := forwardToAgent(t, node), dataPathToken(t, ns, cliServiceAccount)
	reused := ""
	// At least 20 objects, then until one reaches a process that served one before.
	for i := 0; i < objects && (i < 20 || reused == ""); i++ {
		object := fmt.Sprintf("o-%03d", i)
		code, body := call(agent, http.MethodGet, wire.PathTransform+ns+"/"+tr.Name+"/"+object, token, nil)
		served, sum, ok := strings.Cut(body, ":")
		if code != http.StatusOK || !ok || sum != md5hex(data[object]) {
			t.Fatalf("%s: %d %.300q; want 200 and <served>:%s", object, code, body, md5hex(data[object]))
		}
		if served != "1" && reused == "" {
			reused = fmt.Sprintf("%s went to a process that had served %s objects", object, served)
		}
	}
	if reused == "" {
		t.Fatalf("each of %d objects sent one at a time went to a new process; want the command kept", objects)
	}
	t.Log(reused)
}
