package suite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/internal/repo"
)

const (
	// indexName names the package index's pod and Service.
	indexName = "pypi"
	// helloWheelFile is the one wheel the testserver's package index serves.
	helloWheelFile = "mlkubehello-1.0.0-py3-none-any.whl"
)

// helloGreeting is what mlkubehello.greet (e2e/images/testserver/wheel.go) answers for data.
func helloGreeting(data string) string { return "hello from mlkubehello 1.0.0: " + data }

// helloSource is a transformer that needs mlkubehello, which no runtime image carries.
const helloSource = `import mlkubehello


def transform(data):
    return mlkubehello.greet(data)
`

// TestTransformCodeInstallsItsDependencyFromAnIndexInTheCluster creates a code Transform with a
// requirements file through kubectl etl, as a user does, whose dependency comes from a package
// index served in the test's namespace; every node's transformer must install it with pip and
// answer through it.
func TestTransformCodeInstallsItsDependencyFromAnIndexInTheCluster(t *testing.T) {
	nodes := readyNodes(t)
	ns := namespace(t)
	host := serveIndex(t, ns)
	clients := map[string]string{}
	for _, node := range nodes {
		clients[node] = clientOn(t, ns, node)
	}
	// A transformer's pip that cannot reach the index says only that it found no version; prove
	// first that every node reaches the index through its Service, as the transformers will.
	for _, node := range nodes {
		waitForIndex(t, ns, clients[node], node, host)
	}

	dir := t.TempDir()
	source, deps := filepath.Join(dir, "t.py"), filepath.Join(dir, "requirements.txt")
	// pip ignores an index over plain http unless its host is trusted.
	requirements := fmt.Sprintf("--index-url http://%s/simple/\n--trusted-host %s\nmlkubehello==1.0.0\n", host, host)
	for file, content := range map[string]string{source: helloSource, deps: requirements} {
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tr := &v1alpha1.Transform{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns}}
	t.Cleanup(func() {
		if t.Failed() {
			logTransformers(t, tr)
		}
	})
	out := runPlugin(t, buildPlugin(t, "kubectl-etl"), "init", "code", "--name", tr.Name, "--runtime", "python3.11",
		"--from-file", source, "--deps-file", deps, "--init-timeout", "2m", "-n", ns)
	if want := "transform.etl.mlkube.io/hello created\n"; out != want {
		t.Errorf("kubectl etl init code printed %q; want %q", out, want)
	}

	got := k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	if got.Spec.Code == nil || got.Spec.Code.Dependencies != requirements {
		t.Errorf("spec.code %+v; want the dependencies of --deps-file, %q", got.Spec.Code, requirements)
	}
	if want := fmt.Sprintf("%d/%d", len(nodes), len(nodes)); got.Status.NodesReady != want {
		t.Errorf("nodes ready %s; want %s", got.Status.NodesReady, want)
	}
	for _, node := range nodes {
		data := "an object on node " + node
		putObjects(t, ns, node, map[string][]byte{"greeting.txt": []byte(data)})
		code, body := fetchFrom(t, ns, clients[node], transformURL(ns, tr.Name, "greeting.txt"))
		if want := helloGreeting(data); code != 200 || body != want {
			t.Errorf("node %s: the transformer answered %d %q; want 200 %q, from the installed mlkubehello", node, code, body, want)
		}
	}
}

// serveIndex runs the testserver as a package index in ns behind a Service of port 80, and
// returns the Service's host name.
func serveIndex(t *testing.T, ns string) string {
	t.Helper()
	labels := map[string]string{"app.kubernetes.io/name": indexName}
	k8s.MustCreate(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: indexName, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "index", Image: clientImage, ImagePullPolicy: corev1.PullIfNotPresent,
			Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/simple/", Port: intstr.FromString("http")}}, PeriodSeconds: 1},
		}}},
	})
	k8s.MustCreate(t, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: indexName, Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		},
	})
	return indexName + "." + ns + ".svc"
}

// waitForIndex waits until the client pod on node gets the wheel's link from the index at host.
func waitForIndex(t *testing.T, ns, clientPod, node, host string) {
	t.Helper()
	u := "http://" + host + "/simple/mlkubehello/"
	index := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: indexName, Namespace: ns}}
	k8s.Eventually(t, fmt.Sprintf("node %s to reach the package index at %s", node, u), func(ctx context.Context) (bool, error) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(index), index); err != nil {
			return false, err
		}
		if err := podFailed(index); err != nil {
			return false, kubetest.Stop(err)
		}
		code, body := fetchFrom(t, ns, clientPod, u)
		if code != 200 || !strings.Contains(body, helloWheelFile) {
			return false, fmt.Errorf("GET %s from pod %s: %d %q", u, clientPod, code, body)
		}
		return true, nil
	})
}

// buildPlugin builds the command cmd/<name> of this repository, so the test runs the plugin
// as a user does, and returns the executable's path.
func buildPlugin(t *testing.T, name string) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), name)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", exe, "./cmd/"+name)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, out)
	}
	return exe
}

// runPlugin runs a plugin executable against the suite's cluster and returns its stdout; a
// non-zero exit fails the test with what it printed.
func runPlugin(t *testing.T, exe string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, append(args, "--kubeconfig", os.Getenv("MLKUBE_E2E_KUBECONFIG"))...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout: %s\nstderr: %s", filepath.Base(exe), strings.Join(args, " "), err, &stdout, &stderr)
	}
	return stdout.String()
}

// logTransformers logs the end of every transformer pod's log of tr: pip's output tells why a
// dependency did not install.
func logTransformers(t *testing.T, tr *v1alpha1.Transform) {
	ctx := context.Background()
	pods, err := k8s.Pods(ctx, tr)
	if err != nil {
		t.Logf("listing the pods of Transform %s: %v", tr.Name, err)
		return
	}
	for _, p := range pods {
		logs, err := clientset.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](50)}).DoRaw(ctx)
		t.Logf("---- log of transformer pod %s on node %s (err=%v)\n%s", p.Name, p.Spec.NodeName, err, logs)
	}
}
