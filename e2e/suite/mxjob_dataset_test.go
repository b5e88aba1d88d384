package suite

import (
	"context"
	"fmt"
	"slices"
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
