package suite

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// TestMxJobWorkersReadTheirDatasetThroughTheirNodesAgent: alice, an editor of a namespace that
// enforces the restricted Pod Security Standard, puts a dataset with kubectl etl cp and submits
// an MxJob that names it, one worker per node, run as a ServiceAccount the admin bound to
// mlkube-datapath-viewer (docs/datapath-rbac.md, "MxJob workers"), and refused before that. The controller gives the
// workers their token and environment and places one on each node; each worker reads every object
// through the agent Service its environment names, with the token it was given, byte for byte.
// The workers run the testserver, whose /fetch, called through the API server's pod proxy, is
// the request a client in the pod makes.
func TestMxJobWorkersReadTheirDatasetThroughTheirNodesAgent(t *testing.T) {
	admin := newShell(t)
	nodes := readyNodes(t)
	ns := onboard(t, "alice")
	k8s.MustCreate(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: ns}})
	alice := admin.as("alice")
	submit := fmt.Sprintf("submit reader -n %s --workers %d --image %s --dataset etl:train/ --service-account trainer "+
		"--env TOKEN_FILE=%s -- /testserver", ns, len(nodes), clientImage, wire.TokenFile)

	// Until the admin binds trainer, the webhook refuses the job, naming the binding.
	alice.refused(append([]string{"mxjob"}, strings.Fields(submit)...), "",
		fmt.Sprintf("kubectl -n %s create rolebinding trainer-datapath --clusterrole=mlkube-datapath-viewer --serviceaccount=%s:trainer", ns, ns))
	grant(t, ns, "mlkube-datapath-viewer", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "trainer", Namespace: ns})

	files := alice.randomTree("train", 24, 4096, []string{"cats", "dogs"}, 0)
	alice.do(ns, "etl cp ./train etl:train/")
	alice.want(append([]string{"mxjob"}, strings.Fields(submit)...), "mxjob.mxnet.mlkube.io/reader created")
	job := &v1beta1.MxJob{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: ns}}
	t.Cleanup(func() { dumpDiagnostics(t, ns) })

	workers := runningWorkers(t, job, len(nodes))
	var onNodes []string
	for _, w := range workers {
		onNodes = append(onNodes, w.Spec.NodeName)
		env := map[string]string{}
		for _, e := range w.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		if env[wire.EnvDatapathTokenFile] != wire.TokenFile || env[wire.EnvDatasetPrefix] != "train/" || env[wire.EnvNamespace] != ns {
			t.Errorf("worker %s has the environment %v", w.Name, env)
		}
		if w.Spec.ServiceAccountName != "trainer" {
			t.Errorf("worker %s runs as %q, not trainer", w.Name, w.Spec.ServiceAccountName)
		}
		for name, want := range files {
			u := env[wire.EnvDatapathURL] + objectPath(ns, "train/"+name)
			var code int
			var body string
			k8s.Eventually(t, "worker "+w.Name+" reaching its agent", func(context.Context) (bool, error) {
				code, body = proxyResult(clientset.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").Name(w.Name+":8080").
					SubResource("proxy").Suffix("fetch").Param("url", u).Do(context.Background()))
				return code != 0 && code != 502 && code != 503, nil // the testserver still starting
			})
			if code != 200 || body != string(want) {
				t.Errorf("worker %s: GET %s: %d, %d bytes %s; want 200 and the %d bytes put", w.Name, u, code, len(body), shortIfText([]byte(body), want), len(want))
			}
		}
	}
	slices.Sort(onNodes)
	if !slices.Equal(onNodes, nodes) {
		t.Errorf("the workers run on %v; want one on each node with an agent, %v", onNodes, nodes)
	}
	alice.do(ns, "mxjob describe reader", "etl:train/")
	alice.do(ns, "mxjob delete reader", `mxjob.mxnet.mlkube.io "reader" deleted`)
}

// runningWorkers waits until job's n workers run and returns them, sorted by name.
func runningWorkers(t *testing.T, job *v1beta1.MxJob, n int) []corev1.Pod {
	t.Helper()
	var workers []corev1.Pod
	k8s.Eventually(t, fmt.Sprintf("%d workers of %s running", n, job.Name), func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		err := k8s.List(ctx, &pods, client.InNamespace(job.Namespace),
			client.MatchingLabels{v1beta1.LabelJobName: job.Name, v1beta1.LabelReplicaType: v1beta1.ReplicaTypeWorker.Role()})
		if err != nil {
			return false, err
		}
		workers = pods.Items
		for i := range workers {
			if err := podFailed(&workers[i]); err != nil {
				return false, kubetest.Stop(err)
			}
		}
		return len(workers) == n && !slices.ContainsFunc(workers, func(p corev1.Pod) bool { return p.Status.Phase != corev1.PodRunning }), nil
	})
	slices.SortFunc(workers, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return workers
}

// torchImage is the e2e suite's PyTorch training workload (images.TorchTrainer).
const torchImage = "mlkube/e2e-torch:dev"

// trainSamples is how many objects TestMxJobTrainsWithPyTorchOnItsDataset trains on.
const trainSamples = 1000

// decodeCSV is the Transform that makes a training sample of an object: a line of CSV, four
// features and a target, becomes five little-endian float32s.
const decodeCSV = `import struct


def transform(data):
    return struct.pack("<5f", *map(float, data.decode().split(",")))
`

// TestMxJobTrainsWithPyTorchOnItsDataset: erin, an editor of a namespace that enforces the
// restricted Pod Security Standard, copies 1,000 samples into the node tier (spread over the
// nodes) twice: as lines of CSV with a Python Transform that decodes them, and as the samples'
// bytes, read as stored. For each she submits an MxJob of one worker per node that trains a linear
// model with PyTorch (mlkube/e2e-torch:dev: Debian's python3-torch and the mlkube client;
// e2e/images/torch-trainer/train.py); the two jobs run at once. The workers find their dataset,
// token and agent in the environment the controller gave them, gather each other's nodes over
// gloo and read through their own node's agent with locality, and average gradients with
// all_reduce; a job succeeds when every worker has learnt the model (--success-policy
// AllWorkers: the scheduler only hosts the rendezvous, and a job that ended with it would remove
// workers still exiting, with their logs). From the workers' logs, in each job every sample was
// read exactly once across the workers, its bytes were the Transform's output or the stored
// sample, each worker read only objects its own node holds, and the job without a Transform read
// all its objects with batch reads (POST ?batch=true), none with a GET of its own.
func TestMxJobTrainsWithPyTorchOnItsDataset(t *testing.T) {
	admin := newShell(t)
	nodes := readyNodes(t)
	ns := onboard(t, "erin")
	k8s.MustCreate(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: ns}})
	// The workers use the Transform and get the objects as stored: mlkube-datapath-user allows both.
	grant(t, ns, "mlkube-datapath-user", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "trainer", Namespace: ns})
	erin := admin.as("erin")
	t.Cleanup(func() { dumpDiagnostics(t, ns) })

	// Object name: SHA-256 of the sample the worker decodes, the Transform's output or as stored.
	viaTransform, asStored := map[string]string{}, map[string]string{}
	for i := range trainSamples {
		var x [4]float32
		for j := range x { // multiples of 1/64, exact in float32 and in decimal
			x[j] = float32(rand.IntN(257)-128) / 64
		}
		y := x[0] - 2*x[1] + 3*x[2] + x[3]/2 + 0.25
		sample := littleEndianFloats(append(x[:], y))
		erin.file(fmt.Sprintf("samples/s-%04d.csv", i), fmt.Sprintf("%g,%g,%g,%g,%g", x[0], x[1], x[2], x[3], y))
		erin.file(fmt.Sprintf("stored/s-%04d.f32", i), string(sample))
		viaTransform[fmt.Sprintf("train/s-%04d.csv", i)] = sha256hex(sample)
		asStored[fmt.Sprintf("stored/s-%04d.f32", i)] = sha256hex(sample)
	}
	erin.do(ns, "etl cp ./samples etl:train/")
	erin.do(ns, "etl cp ./stored etl:stored/")
	erin.file("decode.py", decodeCSV)
	erin.do(ns, "etl init code --name decode --runtime python3.11 --from-file decode.py", "transform.etl.mlkube.io/decode created")
	erin.do(ns, "wait --for=jsonpath={.status.stage}=Running transforms.etl.mlkube.io/decode --timeout=5m", "condition met")

	submit := fmt.Sprintf("mxjob submit %%s --workers %d --image %s --service-account trainer --success-policy AllWorkers %%s -- /torch-trainer train", len(nodes), torchImage)
	erin.do(ns, fmt.Sprintf(submit, "trainer", "--dataset etl:train/ --transform decode"), "mxjob.mxnet.mlkube.io/trainer created")
	erin.do(ns, fmt.Sprintf(submit, "stored", "--dataset etl:stored/"), "mxjob.mxnet.mlkube.io/stored created")
	for _, job := range []string{"trainer", "stored"} {
		erin.do(ns, "mxjob wait "+job+" --for=Succeeded --timeout=10m", "mxjob.mxnet.mlkube.io/"+job+" Succeeded")
		erin.do(ns, "mxjob logs "+job, regexp.MustCompile(`\[pod/`+job+`-worker-0\] rank 0: loss \d`))
	}

	holder := map[string]string{}
	for _, prefix := range []string{"train/", "stored/"} {
		var list wire.ObjectList
		if raw := erin.do(ns, "etl ls "+prefix+" --recursive -o json"); json.Unmarshal([]byte(raw), &list) != nil {
			t.Fatalf("kubectl etl ls %s --recursive -o json: not an object list: %.500s", prefix, raw)
		}
		for _, o := range list.Items {
			holder[o.Name] = o.Node
		}
	}
	checkTrainingReads(t, erin, ns, "trainer", viaTransform, holder, nodes)
	if batched, got := checkTrainingReads(t, erin, ns, "stored", asStored, holder, nodes); batched != len(asStored) || len(got) != 0 {
		t.Errorf("the job without a Transform read %d of its %d objects in batch reads, and GET %d of them alone (%.200v); want all in batches",
			batched, len(asStored), len(got), got)
	}
}

// checkTrainingReads checks the workers' logs of the training MxJob job (train.py): each object
// of want read exactly once across the workers, with the SHA-256 want gives it, each by a worker
// on the node that holds it, and one worker on each of nodes. It returns how many objects the
// workers asked for in batch reads and which ones they read with a GET of their own.
func checkTrainingReads(t *testing.T, s *shell, ns, job string, want, holder map[string]string, nodes []string) (batched int, got []string) {
	t.Helper()
	var workers corev1.PodList
	if err := k8s.List(context.Background(), &workers, client.InNamespace(ns),
		client.MatchingLabels{v1beta1.LabelJobName: job, v1beta1.LabelReplicaType: v1beta1.ReplicaTypeWorker.Role()}); err != nil {
		t.Fatal(err)
	}
	readBy := map[string][]string{} // object: the workers that read it
	onNodes := []string{}
	for _, w := range workers.Items {
		onNodes = append(onNodes, w.Spec.NodeName)
		logs := s.do(ns, "logs "+w.Name+" -c mxnet", "loss")
		for _, line := range strings.Split(logs, "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "batch":
				n, err := strconv.Atoi(f[1])
				if err != nil {
					t.Errorf("worker %s logged %q: want batch N", w.Name, line)
				}
				batched += n
			case len(f) == 2 && f[0] == "get":
				got = append(got, f[1])
			case len(f) == 4 && f[0] == "object":
				name, digest, node := f[1], f[2], f[3]
				readBy[name] = append(readBy[name], w.Name)
				switch {
				case want[name] == "":
					t.Errorf("%s: worker %s read %s, which is not in the dataset", job, w.Name, name)
				case digest != want[name]:
					t.Errorf("%s: worker %s read %s as bytes of SHA-256 %s; want %s", job, w.Name, name, digest, want[name])
				case node != w.Spec.NodeName || holder[name] != w.Spec.NodeName:
					t.Errorf("%s: worker %s on node %s (it says %s) read %s, which node %q holds: want only its own node's objects",
						job, w.Name, w.Spec.NodeName, node, name, holder[name])
				}
			}
		}
	}
	for name := range want {
		if n := len(readBy[name]); n != 1 {
			t.Errorf("%s: %s was read %d times (by %v); want exactly once across the workers", job, name, n, readBy[name])
		}
	}
	slices.Sort(onNodes)
	if !slices.Equal(onNodes, nodes) {
		t.Errorf("%s: the workers ran on %v; want one on each node, %v", job, onNodes, nodes)
	}
	return batched, got
}

// littleEndianFloats is fs as little-endian float32s, as Python's struct.pack("<f").
func littleEndianFloats(fs []float32) []byte {
	var b []byte
	for _, f := range fs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}
