package etl

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

// md5 is a Transform ready on node-a only, an hour old, with counters and one error.
func md5() *v1alpha1.Transform {
	return &v1alpha1.Transform{
		ObjectMeta: metav1.ObjectMeta{Name: "md5", Namespace: "default", CreationTimestamp: metav1.NewTime(clitest.Now.Add(-time.Hour))},
		Spec:       v1alpha1.TransformSpec{Communication: "ws", Runtime: &v1alpha1.RuntimeSpec{Image: "md5"}},
		Status: v1alpha1.TransformStatus{
			Stage: v1alpha1.StageInitializing, NodesReady: "1/2",
			Totals: v1alpha1.Counters{Objects: 10, BytesIn: 2048, BytesOut: 320, Errors: 1},
			Nodes: []v1alpha1.NodeStatus{
				{Node: "node-a", Pod: "md5-aaaa", IP: "10.0.0.7", Port: 8000, Ready: true, Counters: v1alpha1.Counters{Objects: 10, BytesIn: 2048, BytesOut: 320, Errors: 1}},
				{Node: "node-b", Pod: "md5-bbbb", Restarts: 2},
			},
			Errors: []v1alpha1.ObjectError{{Object: "bad.bin", Message: "not a tar", StatusCode: 500, Node: "node-a", Time: metav1.NewTime(clitest.Now.Add(-5 * time.Minute))}},
		},
	}
}

// stubDataPath is an agent served by httptest, reached without a port-forward.
type stubDataPath struct{ url string }

func (s stubDataPath) Token(_ context.Context, ns, sa string) (string, error) {
	return "token-of-" + ns + ":" + sa, nil
}

func (s stubDataPath) Forward(context.Context, string) (string, func(), error) {
	return s.url, func() {}, nil
}

type testCase struct {
	args      []string
	objs      []client.Object
	kube      []runtime.Object
	intercept interceptor.Funcs
	stdin     string
	wantCode  int
	wantOut   string
	wantErr   string
}

func run(t *testing.T, tc testCase, agent string) *clitest.Env {
	t.Helper()
	s := NewScheme()
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.objs...).WithInterceptorFuncs(tc.intercept)
	env := clitest.NewEnvWith(b, tc.kube...)
	env.Stdin.WriteString(tc.stdin)
	dp := func() (TokenIssuer, AgentForwarder, *http.Client, error) {
		return stubDataPath{agent}, stubDataPath{agent}, http.DefaultClient, nil
	}
	code := env.Run(cli.NewRoot(Plugin, env.Env, commands(env.Env, dp)...), tc.args...)
	env.Check(t, code, tc.wantCode, tc.wantOut, tc.wantErr)
	return env
}

func runCases(t *testing.T, cases map[string]testCase) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { run(t, tc, "") })
	}
}

func TestInspect(t *testing.T) {
	podMetrics := func(name, cpu, mem string) client.Object {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata":   map[string]any{"name": name, "namespace": "default"},
			"containers": []any{map[string]any{"name": "transformer", "usage": map[string]any{"cpu": cpu, "memory": mem}}},
		}}
		u.SetGroupVersionKind(podMetricsKind)
		return u
	}
	runCases(t, map[string]testCase{
		"show": {
			args: []string{"show"}, objs: []client.Object{md5()},
			wantOut: "" +
				"NAME   COMMUNICATION   STAGE          NODES   OBJECTS   BYTES IN   BYTES OUT   ERRORS   AGE\n" +
				"md5    ws              Initializing   1/2     10        2.0KiB     320B        1        60m\n",
		},
		"list is show, wide": {
			args: []string{"list", "-o", "wide", "--no-headers"}, objs: []client.Object{md5()},
			wantOut: "md5   ws    Initializing   1/2   10    2.0KiB   320B   1     60m   runtime   bytes   \n",
		},
		"show nothing": {
			args: []string{"show"}, wantErr: "No transforms found in namespace default.\n",
		},
		"show -o name": {
			args: []string{"show", "md5", "-o", "name"}, objs: []client.Object{md5()},
			wantOut: "transform.etl.mlkube.io/md5\n",
		},
		"details": {
			args: []string{"details", "md5", "-o", "wide"}, objs: []client.Object{md5()},
			wantOut: "" +
				"NODE     POD        READY   RESTARTS   OBJECTS   BYTES IN   BYTES OUT   ERRORS   IP         PORT\n" +
				"node-a   md5-aaaa   true    0          10        2.0KiB     320B        1        10.0.0.7   8000\n" +
				"node-b   md5-bbbb   false   2          0         0B         0B          0        <none>     <none>\n",
		},
		"details of a missing Transform": {
			args: []string{"details", "nope"}, wantCode: cli.ExitUnknown,
			wantErr: "error: transforms.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl list' (-A for all namespaces)\n",
		},
		"errors": {
			args: []string{"errors", "md5"}, objs: []client.Object{md5()},
			wantOut: "" +
				"NODE     OBJECT    CODE   AGE   MESSAGE\n" +
				"node-a   bad.bin   500    5m    not a tar\n",
		},
		"no errors": {
			args: []string{"errors", "md5"}, objs: []client.Object{func() client.Object { t := md5(); t.Status.Errors = nil; return t }()},
			wantErr: "No failed objects recorded for Transform md5.\n",
		},
		"health: a node not ready exits 1": {
			args: []string{"health", "md5"}, objs: []client.Object{md5()}, wantCode: 1,
			wantOut: "" +
				"NODE     POD        HEALTH     RESTARTS\n" +
				"node-a   md5-aaaa   Healthy    0\n" +
				"node-b   md5-bbbb   NotReady   2\n",
			wantErr: "error: transform md5 is not healthy on 1 of 2 nodes; see kubectl etl logs md5\n",
		},
		"health of a stopped Transform": {
			args: []string{"health", "md5"}, wantCode: 1,
			objs: []client.Object{func() client.Object {
				t := md5()
				t.Status = v1alpha1.TransformStatus{Stage: v1alpha1.StageStopped}
				return t
			}()},
			wantErr: "error: transform md5 runs on no node (stage Stopped)\n",
		},
		"metrics: node-b has no sample yet": {
			args: []string{"metrics", "md5"}, objs: []client.Object{md5(), podMetrics("md5-aaaa", "250m", "64Mi")},
			wantOut: "" +
				"NODE     POD        CPU(CORES)   MEMORY(BYTES)\n" +
				"node-a   md5-aaaa   250m         64Mi\n" +
				"node-b   md5-bbbb   <unknown>    <unknown>\n",
		},
		"metrics without a metrics API": {
			args: []string{"metrics", "md5"}, objs: []client.Object{md5()}, wantCode: cli.ExitUnknown,
			intercept: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*unstructured.Unstructured); ok {
					return &meta.NoKindMatchError{GroupKind: podMetricsKind.GroupKind(), SearchedVersions: []string{"v1beta1"}}
				}
				return c.Get(ctx, key, obj, opts...)
			}},
			wantErr: `error: the cluster serves no metrics API (metrics.k8s.io): install metrics-server to see CPU and memory (no matches for kind "PodMetrics" in version "metrics.k8s.io/v1beta1")` + "\n",
		},
	})
}

func TestLogs(t *testing.T) {
	pods := []runtime.Object{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "md5-aaaa", Namespace: "default"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "md5-bbbb", Namespace: "default"}},
	}
	runCases(t, map[string]testCase{
		// The fake clientset answers every log request with "fake logs".
		"every node, prefixed": {
			args: []string{"logs", "md5"}, objs: []client.Object{md5()}, kube: pods,
			wantOut: "[node-a] fake logs\n[node-b] fake logs\n",
		},
		"one node, followed": {
			args: []string{"logs", "md5", "--node", "node-b", "-f"}, objs: []client.Object{md5()}, kube: pods,
			wantOut: "[node-b] fake logs\n",
		},
		"a node without a transformer": {
			args: []string{"logs", "md5", "--node", "node-c"}, objs: []client.Object{md5()}, wantCode: 1,
			wantErr: "error: transform md5 has no transformer pod on node node-c; see kubectl etl details md5\n",
		},
	})
}

func TestLifecycle(t *testing.T) {
	stopped := func(name string, stopped bool) client.Object {
		t := md5()
		t.Name, t.Spec.Stopped = name, stopped
		return t
	}
	cases := map[string]struct {
		testCase
		wantStopped map[string]bool
	}{
		"stop": {
			testCase:    testCase{args: []string{"stop", "md5"}, objs: []client.Object{stopped("md5", false)}, wantOut: "transform.etl.mlkube.io/md5 stopped\n"},
			wantStopped: map[string]bool{"md5": true},
		},
		"start all": {
			testCase: testCase{args: []string{"start", "--all"}, objs: []client.Object{stopped("a", true), stopped("b", true)},
				wantOut: "transform.etl.mlkube.io/a started\ntransform.etl.mlkube.io/b started\n"},
			wantStopped: map[string]bool{"a": false, "b": false},
		},
		"stop goes on past a missing name": {
			testCase: testCase{args: []string{"stop", "nope", "md5"}, objs: []client.Object{stopped("md5", false)}, wantCode: cli.ExitUnknown,
				wantOut: "transform.etl.mlkube.io/md5 stopped\n", wantErr: "error: transforms.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl list' (-A for all namespaces)\n"},
			wantStopped: map[string]bool{"md5": true},
		},
		"rm": {
			testCase: testCase{args: []string{"rm", "a", "b"}, objs: []client.Object{stopped("a", false), stopped("b", false), stopped("c", false)},
				wantOut: "transform.etl.mlkube.io \"a\" deleted\ntransform.etl.mlkube.io \"b\" deleted\n"},
			wantStopped: map[string]bool{"c": false},
		},
		"rm needs names or --all": {
			testCase: testCase{args: []string{"rm"}, wantCode: 1, wantErr: "error: name at least one Transform, or pass --all; see 'kubectl etl rm --help'\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := run(t, tc.testCase, "")
			var list v1alpha1.TransformList
			if err := env.Factory.Ctrl.List(context.Background(), &list); err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, tr := range list.Items {
				got[tr.Name] = tr.Spec.Stopped
			}
			if diff := cmp.Diff(tc.wantStopped, got, cmpEmptyMap); diff != "" {
				t.Errorf("spec.stopped by Transform (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmptyMap = cmp.FilterValues(func(a, b map[string]bool) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInit(t *testing.T) {
	src := writeFile(t, "upper.py", "def transform(b):\n    return b.upper()\n")
	deps := writeFile(t, "requirements.txt", "numpy\n")
	pod := writeFile(t, "pod.yaml", aisPod)
	specs := aisSpecServer(t)
	runCases(t, map[string]testCase{
		"code, the chunk size under its first name": {
			args: []string{"init", "code", "--name", "upper", "--runtime", "python3.11", "--from-file", src,
				"--chunk-size", "4096", "--dry-run=client", "-o", "jsonpath={.spec.code.chunkSize}"},
			wantOut: "4096",
			wantErr: "Flag --chunk-size is now --stream-chunk-size (in get and list, --chunk-size pages lists)\n",
		},
		"code, client dry run as YAML": {
			args: []string{"init", "code", "--name", "upper", "--runtime", "python3.11", "--from-file", src, "--deps-file", deps,
				"--stream-chunk-size", "4096", "--comm-type", "io", "--object-timeout", "30s", "--dry-run=client", "-o", "yaml"},
			wantOut: `apiVersion: etl.mlkube.io/v1alpha1
kind: Transform
metadata:
  name: upper
  namespace: default
spec:
  code:
    chunkSize: 4096
    dependencies: |
      numpy
    runtime: python3.11
    source: |
      def transform(b):
          return b.upper()
  communication: io
  objectTimeout: 30s
status:
  totals: {}
`,
		},
		"spec": {
			args:    []string{"init", "spec", "-f", pod, "--name", "md5", "--arg-type", "fqn"},
			wantOut: "transform.etl.mlkube.io/md5 created\n",
			wantErr: aisPodReport,
		},
		"AIStore's runtime spec from a URL, server dry run": {
			args:    []string{"init", "-f", specs.URL + "/md5/etl_spec.yaml", "--dry-run=server"},
			wantOut: "transform.etl.mlkube.io/md5-etl created (server dry run)\n",
			wantErr: `converted AIStore ETL runtime spec "md5-etl":
  AIStore ETL runtime spec -> etl.mlkube.io/v1alpha1, kind Transform (spec.runtime)
  name md5-etl -> metadata.name
  runtime.image -> spec.runtime
  communication hpush:// -> spec.communication hpush
  init_timeout 5m -> spec.initTimeout 5m0s
  support_direct_put dropped: every node's agent writes the results of its own objects, so there is no other node to put to
  the transformer runs as uid 65532 (non-root, no privilege escalation, capabilities dropped: the restricted Pod Security Standard); an image that needs root must be rebuilt
`,
		},
		"a URL that is not there": {
			args: []string{"init", "-f", specs.URL + "/nothing.yaml"}, wantCode: 1,
			wantErr: "error: fetching " + specs.URL + "/nothing.yaml: 404 Not Found\n",
		},
		"a URL that answers without end": {
			args: []string{"init", "-f", specs.URL + "/endless.yaml"}, wantCode: 1,
			wantErr: "error: fetching " + specs.URL + "/endless.yaml: more than 8 MiB, too much for a manifest; download the file and pass its path\n",
		},
		"file from stdin, several documents": {
			args:    []string{"init", "-f", "-", "-n", "team-a"},
			stdin:   "apiVersion: etl.mlkube.io/v1alpha1\nkind: Transform\nmetadata: {name: a}\nspec: {runtime: {image: a}}\n---\napiVersion: etl.mlkube.io/v1alpha1\nkind: Transform\nmetadata: {name: b}\nspec: {runtime: {image: b}}\n",
			wantOut: "transform.etl.mlkube.io/a created\ntransform.etl.mlkube.io/b created\n",
		},
		"init without a form": {
			args: []string{"init"}, wantCode: 1,
			wantErr: "error: pass -f with Transforms or AIStore ETL specs, or use init spec or init code; see 'kubectl etl init --help'\n",
		},
		"code needs its flags": {
			args: []string{"init", "code", "--name", "x"}, wantCode: 1,
			wantErr: "error: required flag(s) \"from-file\", \"runtime\" not set; see 'kubectl etl init code --help'\n",
		},
		"an existing name": {
			args: []string{"init", "spec", "-f", pod, "--name", "md5"}, objs: []client.Object{md5()}, wantCode: 1,
			wantErr: aisPodReport + "error: creating Transform md5: transforms.etl.mlkube.io \"md5\" already exists\n",
		},
	})
}

// aisPodReport is what converting aisPod under the name md5 changes.
const aisPodReport = `converted AIStore ETL pod spec "md5":
  apiVersion v1, kind Pod -> etl.mlkube.io/v1alpha1, kind Transform (metadata.labels, metadata.annotations and spec -> spec.podTemplate)
  metadata.name transformer-md5 replaced by the name given, md5
  metadata.annotations.communication_type hpush:// -> spec.communication hpush
  metadata.annotations.wait_timeout 2m -> spec.initTimeout 2m0s
  the transformer runs as uid 65532 (non-root, no privilege escalation, capabilities dropped: the restricted Pod Security Standard); an image that needs root must be rebuilt
`

// aisSpecServer serves an AIStore runtime spec, and an answer without end, as a web server would.
func aisSpecServer(t *testing.T) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/md5/etl_spec.yaml":
			io.WriteString(w, "name: md5-etl\nruntime:\n  image: aistorage/transformer_md5:latest\ncommunication: hpush://\ninit_timeout: 5m\nsupport_direct_put: true\n")
		case "/endless.yaml":
			line := []byte("# " + strings.Repeat("x", 1021) + "\n")
			for {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func TestObject(t *testing.T) {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.Header.Get("Authorization") {
		case "Bearer token-of-default:mlkube-cli":
			io.WriteString(w, r.Method+" "+r.URL.EscapedPath()+" "+string(body))
		case "Bearer token-of-default:loader":
			http.Error(w, "loader may not use transforms md5", http.StatusForbidden)
		default:
			http.Error(w, "bad token", http.StatusUnauthorized)
		}
	}))
	defer agent.Close()
	src := writeFile(t, "cat photo.jpg", "meow")
	dst := filepath.Join(t.TempDir(), "out.txt")
	cases := map[string]testCase{
		"to stdout": {
			args: []string{"object", "md5", src, "-"}, objs: []client.Object{md5()},
			wantOut: "PUT /v1/transform/default/md5/cat%20photo.jpg meow",
		},
		"to a file": {
			args: []string{"object", "md5", src, dst, "--node", "node-a"}, objs: []client.Object{md5()},
		},
		"not ready on the node": {
			args: []string{"object", "md5", src, "-", "--node", "node-b"}, objs: []client.Object{md5()}, wantCode: 1,
			wantErr: "error: transform md5 is not ready on node node-b; it is on node-a\n",
		},
		"a ServiceAccount without the binding": {
			args: []string{"object", "md5", src, "-", "--service-account", "loader"}, objs: []client.Object{md5()}, wantCode: 1,
			wantErr: "error: ServiceAccount default:loader may not use Transform md5 (403: loader may not use transforms md5); bind it to the data path role: kubectl -n default create rolebinding loader-datapath --clusterrole=mlkube-datapath-user --serviceaccount=default:loader (docs/datapath-rbac.md), or pass --service-account\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) { run(t, tc, agent.URL) })
	}
	if got, err := os.ReadFile(dst); err != nil || string(got) != "PUT /v1/transform/default/md5/cat%20photo.jpg meow" {
		t.Errorf("the result file: %q, %v", got, err)
	}
}

func TestRefusalOf401(t *testing.T) {
	err := refusal(objectRequest{namespace: "ns", pipeline: "md5", serviceAccount: "default"}, 401, "bad token")
	want := `the data path agent did not accept the token of ServiceAccount ns:default (401: bad token); the agent checks tokens for audience "mlkube-datapath" (its --token-audience), see docs/datapath-rbac.md`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Error(diff)
	}
}

func TestRun(t *testing.T) {
	withStatus := func(st v1alpha1.TransformRunStatus) *v1alpha1.TransformRun {
		return &v1alpha1.TransformRun{ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "default"}, Status: st}
	}
	// watchOf serves the given changes of the run, then closes the watch.
	watchOf := func(runs ...*v1alpha1.TransformRun) interceptor.Funcs {
		return interceptor.Funcs{Watch: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
			w := watch.NewFakeWithChanSize(len(runs), false)
			for _, r := range runs {
				w.Modify(r)
			}
			return w, nil
		}}
	}
	failed := runStatus(v1alpha1.RunFailed, 3, 0, 1, 4, "", "")
	failed.Errors = []v1alpha1.ObjectError{{Object: "raw/x", Message: "boom", StatusCode: 500, Node: "node-a", Time: metav1.NewTime(clitest.Now.Add(-time.Minute))}}
	failed.Conditions = []metav1.Condition{{Type: "Failed", Status: "True", Reason: "ObjectsFailed", Message: "1 of 4 objects failed"}}
	runCases(t, map[string]testCase{
		"create": {
			args:    []string{"run", "md5", "--src", "raw", "--dst", "out", "--run-name", "r1", "--workers-per-node", "8", "--continue-on-error"},
			wantOut: "transformrun.etl.mlkube.io/r1 created\n",
		},
		"wait until it succeeds, plain lines off a terminal": {
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--run-name", "r1", "--wait"},
			intercept: watchOf(
				withStatus(runStatus(v1alpha1.RunRunning, 1, 0, 0, 4, "1 obj/s, 0.0 MB/s", "3s")),
				withStatus(runStatus(v1alpha1.RunRunning, 1, 0, 0, 4, "1 obj/s, 0.0 MB/s", "3s")),
				withStatus(runStatus(v1alpha1.RunSucceeded, 4, 0, 0, 4, "2 obj/s, 0.0 MB/s", ""))),
			wantOut: "transformrun.etl.mlkube.io/r1 created\n" +
				"Pending 0/0 objects\n" +
				"Running 1/4 objects, 1 obj/s, 0.0 MB/s, ETA 3s\n" +
				"Succeeded 4/4 objects, 2 obj/s, 0.0 MB/s\n",
		},
		"wait until it fails: exit 1 with the errors": {
			args:      []string{"run", "md5", "--src", "raw", "--dst", "out", "--run-name", "r1", "--wait"},
			intercept: watchOf(withStatus(failed)),
			wantCode:  1,
			wantOut: "transformrun.etl.mlkube.io/r1 created\n" +
				"Pending 0/0 objects\n" +
				"Failed 3/4 objects, 1 failed\n",
			wantErr: "NODE     OBJECT   CODE   AGE   MESSAGE\n" +
				"node-a   raw/x    500    60s   boom\n" +
				"error: TransformRun r1 failed: 1 of 4 objects failed; every failed object: kubectl etl runs errors r1\n",
		},
		"--workers, the flag's first name, still works and says which to use": {
			args:    []string{"run", "md5", "--src", "raw", "--dst", "out", "--run-name", "r1", "--workers", "8"},
			wantOut: "transformrun.etl.mlkube.io/r1 created\n",
			wantErr: "Flag --workers is now --workers-per-node (in kubectl mxjob, --workers counts worker replicas)\n",
		},
		"--args a code function cannot take: refused before the run exists": {
			args: []string{"run", "upper", "--src", "raw", "--dst", "out", "--run-name", "r1", "--args", "x"}, objs: []client.Object{codeTransform("upper", "def transform(data):\n    return data.upper()\n")}, wantCode: 1,
			wantErr: "error: --args cannot reach Transform upper: its function transform() takes no etl_args parameter, so the runtime would drop them; define it as transform(data, path, etl_args) (or give it a keyword-only etl_args) and create the Transform again, or leave out --args\n",
		},
		"--args a code function takes": {
			args: []string{"run", "upper", "--src", "raw", "--dst", "out", "--run-name", "r1", "--args", "x"}, objs: []client.Object{codeTransform("upper", "def transform(data, path, etl_args):\n    return data\n")},
			wantOut: "transformrun.etl.mlkube.io/r1 created\n",
		},
		"--args through a pipeline where one stage takes them": {
			args:    []string{"run", "upper>>keep", "--src", "raw", "--dst", "out", "--run-name", "r1", "--args", "x"},
			objs:    []client.Object{codeTransform("upper", "def transform(data):\n    return data\n"), codeTransform("keep", "def transform(data, *rest):\n    return data\n")},
			wantOut: "transformrun.etl.mlkube.io/r1 created\n",
		},
		"workers out of range": {
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--workers-per-node", "0"}, wantCode: 1,
			wantErr: "error: --workers-per-node must be between 1 and 64; see 'kubectl etl run --help'\n",
		},
	})
}

func TestCompletion(t *testing.T) {
	runCases(t, map[string]testCase{
		"Transform names": {
			args: []string{"__complete", "details", ""}, objs: []client.Object{md5()},
			wantOut: "md5\n:4\n", wantErr: "Completion ended with directive: ShellCompDirectiveNoFileComp\n",
		},
		"nodes of the Transform": {
			args: []string{"__complete", "logs", "md5", "--node", ""}, objs: []client.Object{md5()},
			wantOut: "node-a\nnode-b\n:4\n", wantErr: "Completion ended with directive: ShellCompDirectiveNoFileComp\n",
		},
	})
}

// codeTransform is a Python code Transform of source, in namespace default.
func codeTransform(name, source string) *v1alpha1.Transform {
	return &v1alpha1.Transform{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       v1alpha1.TransformSpec{Code: &v1alpha1.CodeSpec{Runtime: "python3.11", Source: source}},
	}
}
